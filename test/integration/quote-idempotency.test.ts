// The quote's single-statement idempotency (db/repositories/keyed-quote.ts) against real Postgres, and the same
// "another request committed the key after my look-up" race in the general request transaction
// (db/keyed-transaction.ts).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Client } from 'pg';
import { systemEm, tenantEm } from '../../db/orm';
import { insertKeyedQuote } from '../../db/repositories/keyed-quote';
import { inKeyedTransaction } from '../../db/keyed-transaction';
import { priceQuote } from '../../services/quotes';
import { activeAccount } from '../helpers/fixtures';
import type { Response } from 'supertest';
import { eventually, newCustomer, stack, TestCustomer } from '../helpers/stack';

describe('quote idempotency in one statement', () => {
  const quotesOf = async (accountId: string) => {
    const { services } = await stack();
    return (
      (await systemEm(services.orm).execute('select count(*)::int as n from quotes where account_id = ?', [
        accountId,
      ])) as Array<{ n: number }>
    )[0].n;
  };

  /** One quote request sent twice with one new key: `second` is the retry's body (by default the same). */
  const sendTwice = async (c: TestCustomer, body: object, second: object = body) => {
    const { http } = await stack();
    const key = { 'X-Idempotency-Key': randomUUID() };
    const first = await http.post('/api/quotes').set(c.auth).set(key).send(body);
    const again = await http.post('/api/quotes').set(c.auth).set(key).send(second);
    return { first, again };
  };
  /** The first answer is `status`, not a replay; the retry replays it, marked and identical. */
  const expectReplayed = (first: Response, again: Response, status: number) => {
    expect(first.status).to.equal(status);
    expect(first.header['idempotent-replayed']).to.equal(undefined);
    expect(again.status).to.equal(status);
    expect(again.header['idempotent-replayed']).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
  };

  it('replays the same quote for the same key and body, marked as a replay, with one quote row', async () => {
    const c = await newCustomer('Replay Quote Ltda');
    const account = await activeAccount(c, ['USD', 'BRL']);
    const body = { accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '10.00' };
    const { first, again } = await sendTwice(c, body, {
      targetAsset: 'BRL',
      sourceAmount: '10.00',
      sourceAsset: 'USD',
      accountId: account.id,
    });
    expectReplayed(first, again, 201);
    expect(first.body.account.owner).to.be.a('string').and.not.equal('');
    expect(await quotesOf(account.id)).to.equal(1);
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED for the key with another body, and writes nothing', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['USD', 'BRL']);
    const key = { 'X-Idempotency-Key': randomUUID() };
    await http
      .post('/api/quotes')
      .set(c.auth)
      .set(key)
      .send({ accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '10.00' });
    const other = await http
      .post('/api/quotes')
      .set(c.auth)
      .set(key)
      .send({ accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '11.00' });
    expect(other.status).to.equal(422);
    expect(other.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
    expect(await quotesOf(account.id)).to.equal(1);
  });

  it('stores a 404 for an account that is not the caller’s, and replays it', async () => {
    const c = await newCustomer();
    const stranger = await newCustomer('Stranger SA');
    const theirs = await activeAccount(stranger, ['USD', 'BRL']);
    const { first, again } = await sendTwice(c, {
      accountId: theirs.id,
      sourceAsset: 'USD',
      targetAsset: 'BRL',
      sourceAmount: '10.00',
    });
    expectReplayed(first, again, 404);
    expect(first.body.code).to.equal('NOT_FOUND');
    expect(await quotesOf(theirs.id)).to.equal(0);
  });

  it('stores a pricing error and replays it', async () => {
    const c = await newCustomer();
    const account = await activeAccount(c, ['USD', 'BRL']);
    const { first, again } = await sendTwice(c, {
      accountId: account.id,
      sourceAsset: 'USD',
      targetAsset: 'BRL',
      sourceAmount: '10.001',
    });
    expectReplayed(first, again, 400);
  });

  it('lets 20 racers with one key write one quote: each gets that quote or 409 IDEMPOTENCY_KEY_IN_USE', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['USD', 'BRL']);
    const key = { 'X-Idempotency-Key': randomUUID() };
    const body = { accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '10.00' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => http.post('/api/quotes').set(c.auth).set(key).send(body)),
    );
    const created = answers.filter((r) => r.status === 201);
    const busy = answers.filter((r) => r.status === 409);
    expect(created.length + busy.length).to.equal(20);
    expect(created.length).to.be.at.least(1);
    expect(new Set(created.map((r) => r.body.id)).size).to.equal(1);
    for (const r of busy) expect(r.body.code).to.equal('IDEMPOTENCY_KEY_IN_USE');
    expect(await quotesOf(account.id)).to.equal(1);
  });

  it('answers two customers quoting at once each with its own quote, though they share statements', async () => {
    const { http } = await stack();
    const customers = await Promise.all([newCustomer(), newCustomer()]);
    const owners = ['Batch One Ltda', 'Batch Two Ltda'];
    const accounts = await Promise.all(
      customers.map((c, n) => activeAccount(c, ['USD', 'BRL'], { legalName: owners[n] })),
    );
    const sent = customers.flatMap((c, n) =>
      Array.from({ length: 20 }, (_, i) => ({
        c,
        account: { id: accounts[n].id, owner: owners[n] },
        key: { 'X-Idempotency-Key': randomUUID() },
        body: { accountId: accounts[n].id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: `${10 + i}.00` },
      })),
    );
    const send = () => Promise.all(sent.map((q) => http.post('/api/quotes').set(q.c.auth).set(q.key).send(q.body)));
    const answers = await send();
    answers.forEach((r, i) => {
      expect(r.status).to.equal(201);
      expect(r.body.account).to.deep.equal(sent[i].account);
      expect(r.body.sourceAmount.value).to.equal(sent[i].body.sourceAmount);
    });
    expect(new Set(answers.map((r) => r.body.id)).size).to.equal(40);
    expect(await Promise.all(accounts.map((a) => quotesOf(a.id)))).to.deep.equal([20, 20]);
    const again = await send();
    again.forEach((r, i) => {
      expect(r.header['idempotent-replayed']).to.equal('true');
      expect(r.body).to.deep.equal(answers[i].body);
    });
  });

  it('fails only the request whose row breaks the statement it shares, and writes nothing for it', async () => {
    const { services } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['USD', 'BRL']);
    const em = tenantEm(services.orm, c.customerId);
    const request = (key: string) => ({
      accountId: account.id,
      key,
      requestHash: 'h',
      answer: { status: 201 as const, body: () => ({ account: {} }) },
      notFoundBody: {},
    });
    const rates = await services.rates.current();
    const quote = () =>
      priceQuote(rates, 30, {
        accountId: account.id,
        sourceAsset: 'USD',
        targetAsset: 'BRL',
        sourceAmount: '10.00',
      });
    // A source asset longer than its column fails the statement that carries it. The first two requests leave
    // alone (two statements at once); the other six wait and share the third, the broken one among them.
    const broken = { ...quote(), sourceAsset: 'X'.repeat(300) as never };
    const keys = Array.from({ length: 8 }, () => randomUUID());
    const outcomes = await Promise.all(
      keys.map((key, i) =>
        insertKeyedQuote(em, i === 5 ? broken : quote(), request(key)).then(
          (outcome) => outcome.kind,
          (err: Error) => err.message,
        ),
      ),
    );
    outcomes.forEach((outcome, i) => expect(outcome).to.match(i === 5 ? /too long/ : /^answered$/));
    expect(await quotesOf(account.id)).to.equal(7);
    const stored = (await systemEm(services.orm).execute(
      "select key from idempotency_keys where customer_id = ? and key::text = any(string_to_array(?, ','))",
      [c.customerId, keys.join(',')],
    )) as Array<{ key: string }>;
    expect(stored.map((r) => r.key).sort()).to.deep.equal(keys.filter((_, i) => i !== 5).sort());
  });

  describe('a key committed by another request after the statement looked', () => {
    // Another connection holds an uncommitted row for the key (without the advisory lock, which only a request
    // takes): our statement takes the lock, cannot see the row, and waits on it at the insert; the row then
    // commits, which is exactly the window between a look-up's snapshot and a COMMIT by someone else.
    async function withUncommittedKey(
      customerId: string,
      key: string,
      racer: () => Promise<unknown>,
    ): Promise<unknown> {
      const other = new Client({ connectionString: process.env.DATABASE_URL });
      await other.connect();
      try {
        await other.query('begin');
        await other.query(
          `insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body,
            created_at, expires_at)
           values ($1, $2, 'h', 'DONE', 201, '{"id":"first"}', now(), now() + interval '1 hour')`,
          [customerId, key],
        );
        const [{ pid }] = (await other.query('select pg_backend_pid() as pid')).rows;
        const raced = racer();
        // Commit only once the racer waits on our row (pg_locks, unlike pg_stat_activity, is not frozen for the
        // length of our transaction).
        const waitingOnUs = async () =>
          (
            await other.query(
              'select count(*)::int as n from pg_locks where not granted and $1 = any(pg_blocking_pids(pid))',
              [pid],
            )
          ).rows[0].n;
        await eventually(waitingOnUs, (n) => n > 0, 10_000, 10);
        await other.query('commit');
        return await raced;
      } finally {
        await other.end();
      }
    }

    it('writes neither quote nor answer in the quote statement, and says so', async () => {
      const { services } = await stack();
      const c = await newCustomer();
      const account = await activeAccount(c, ['USD', 'BRL']);
      const key = randomUUID();
      const em = tenantEm(services.orm, c.customerId);
      const quote = priceQuote(await services.rates.current(), 30, {
        accountId: account.id,
        sourceAsset: 'USD',
        targetAsset: 'BRL',
        sourceAmount: '10.00',
      });
      const outcome = await withUncommittedKey(c.customerId, key, () =>
        insertKeyedQuote(em, quote, {
          accountId: account.id,
          key,
          requestHash: 'h2',
          answer: { status: 201, body: () => ({ account: {} }) },
          notFoundBody: {},
        }),
      );
      expect(outcome).to.deep.equal({ kind: 'raced' });
      expect(await quotesOf(account.id)).to.equal(0);
      const stored = (await systemEm(services.orm).execute(
        'select response_body from idempotency_keys where customer_id = ? and key = ?',
        [c.customerId, key],
      )) as Array<{ response_body: unknown }>;
      expect(stored[0].response_body).to.deep.equal({ id: 'first' });
    });

    it('runs the request transaction again instead of overwriting the answer, and the rerun replays it', async () => {
      const { services } = await stack();
      const c = await newCustomer();
      const key = randomUUID();
      let runs = 0;
      const outcome = await withUncommittedKey(c.customerId, key, () =>
        inKeyedTransaction(
          tenantEm(services.orm, c.customerId),
          { key, requestHash: 'h' },
          async () => {
            runs++;
            return { status: 201, body: { id: 'second' } };
          },
          { answerOf: (answer) => answer, storedError: () => undefined },
        ),
      );
      expect(runs, 'the handler ran once, and its run was rolled back').to.equal(1);
      expect(outcome).to.deep.equal({ kind: 'replay', answer: { status: 201, body: { id: 'first' } } });
      const stored = (await systemEm(services.orm).execute(
        'select response_body from idempotency_keys where customer_id = ? and key = ?',
        [c.customerId, key],
      )) as Array<{ response_body: unknown }>;
      expect(stored[0].response_body).to.deep.equal({ id: 'first' });
    });
  });
});
