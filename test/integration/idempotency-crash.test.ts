// An API process that dies in the middle of a mutating request, killed for real (SIGKILL of a spawned
// `tsx api/main.ts` at an exact point, see services/crash-point.ts), and the client's retry with the same
// X-Idempotency-Key on another process: the key's result commits with the business write or not at all.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { activeAccount, createAccount, getAccount, submitReview, uploadAllDocuments } from '../helpers/fixtures';
import { balance, fund, quote, untilStatus } from '../helpers/money';
import { exitWithin, killAll, spawnApi } from '../helpers/processes';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  const { services } = await stack();
  return (await systemEm(services.orm).execute(query, params)) as T[];
}

const operationsFrom = async (accountId: string) =>
  await sql<{ id: string; status: string }>(
    `select id, status from operations where account_id = ? and type in ('TRANSFER', 'SWAP') order by created_at`,
    [accountId],
  );

/** A POST that is expected to get no answer at all: the process dies under it. */
async function postExpectingNoAnswer(url: string, c: TestCustomer, key: string, body: unknown): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': key },
    body: JSON.stringify(body),
  }).then(
    (r) => `answered ${r.status}`,
    (err: Error) => err,
  );
  expect(res, 'the request got no answer (its process died)').to.be.instanceOf(Error);
}

describe('idempotency across a process crash', function () {
  this.timeout(150000);
  let c: TestCustomer;
  let source: { id: string };
  let target: { id: string };
  let crashAfter: { url: string; name: string } & Awaited<ReturnType<typeof spawnApi>>;
  let crashBefore: Awaited<ReturnType<typeof spawnApi>>;
  let crashBeforePayment: Awaited<ReturnType<typeof spawnApi>>;
  let crashBeforeDecision: Awaited<ReturnType<typeof spawnApi>>;

  before(async () => {
    const { config } = await stack();
    // Both processes start while the fixtures are built; each dies at its crash point on its first POST.
    const spawning = Promise.all([
      spawnApi('api-crash-after-commit', config.taskQueue, { CAMBIO_TEST_CRASH_AT: 'after-commit' }),
      spawnApi('api-crash-before-commit', config.taskQueue, { CAMBIO_TEST_CRASH_AT: 'before-commit' }),
      spawnApi('api-crash-before-commit-payment', config.taskQueue, { CAMBIO_TEST_CRASH_AT: 'before-commit' }),
      spawnApi('api-crash-before-commit-decision', config.taskQueue, { CAMBIO_TEST_CRASH_AT: 'before-commit' }),
    ]);
    spawning.catch(() => undefined);
    c = await newCustomer('Crash Retry Ltda');
    source = await activeAccount(c, ['BRL', 'USD']);
    target = await activeAccount(c, ['BRL']);
    await fund(c, source.id, 'BRL', '1000.00');
    [crashAfter, crashBefore, crashBeforePayment, crashBeforeDecision] = await spawning;
  });

  after(killAll);

  it('a request that died after COMMIT: the retry replays the stored result and moves nothing again', async () => {
    const { http } = await stack();
    const key = randomUUID();
    const body = { sourceAccountId: source.id, targetAccountId: target.id, amount: { value: '100.00', asset: 'BRL' } };
    const before = (await operationsFrom(source.id)).length;

    await postExpectingNoAnswer(`${crashAfter.url}/api/operations/transfer`, c, key, body);
    await exitWithin(crashAfter);
    const committed = (await operationsFrom(source.id)).slice(before);
    expect(committed, 'the dead process had committed the transfer').to.have.length(1);

    const started = Date.now();
    const retry = await http.post('/api/operations/transfer').set(c.auth).set('X-Idempotency-Key', key).send(body);
    expect(Date.now() - started, 'answered at once, no lease to wait out').to.be.below(5000);
    expect(retry.status).to.equal(201);
    expect(retry.headers['idempotent-replayed']).to.equal('true');
    expect(retry.body.id).to.equal(committed[0].id);

    // The dead process had nothing left to do after COMMIT: the worker's relay, woken by it, starts the workflow.
    await untilStatus(c, retry.body.id, 'COMPLETED');
    expect(await operationsFrom(source.id)).to.have.length(before + 1);
    const settles = await sql<{ n: string }>(
      `select count(*) as n from ledger_transactions where operation_id = ? and key like '%:settle'`,
      [retry.body.id],
    );
    expect(Number(settles[0].n)).to.equal(1);
    expect(await balance(c, source.id, 'BRL')).to.deep.include({ available: '900.00', held: '0.00' });
    expect(await balance(c, target.id, 'BRL')).to.deep.include({ available: '100.00', held: '0.00' });
  });

  it(
    'a request that died before COMMIT: the retry runs for the first time, at once, and creates one ' + 'operation',
    async () => {
      const { http } = await stack();
      const key = randomUUID();
      const q = await quote(c, { accountId: source.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '50.00' });
      const body = { accountId: source.id, quoteId: q.id };
      const before = (await operationsFrom(source.id)).length;

      await postExpectingNoAnswer(`${crashBefore.url}/api/operations/swap`, c, key, body);
      await exitWithin(crashBefore);
      expect(await operationsFrom(source.id), 'nothing of the dead request survived').to.have.length(before);
      const [quoteRow] = await sql<{ consumed_by: string | null }>('select consumed_by from quotes where id = ?', [
        q.id,
      ]);
      expect(quoteRow.consumed_by, 'the quote is still free').to.equal(null);

      // The dead request's key lock goes when Postgres notices its connection dropped, a few milliseconds after the
      // process exits (longer on a loaded machine): until then the retry hears 409 "still being processed" and asks
      // again, as that answer tells a client to. What must not happen is a lockout.
      const started = Date.now();
      const retry = await eventually(
        () => http.post('/api/operations/swap').set(c.auth).set('X-Idempotency-Key', key).send(body),
        (res) => !(res.status === 409 && res.body.code === 'IDEMPOTENCY_KEY_IN_USE'),
        5000,
        100,
      );
      expect(Date.now() - started, 'no IDEMPOTENCY_KEY_IN_USE lockout').to.be.below(5000);
      expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
      expect(retry.headers['idempotent-replayed']).to.equal(undefined);
      await untilStatus(c, retry.body.id, 'COMPLETED');
      const again = await http.post('/api/operations/swap').set(c.auth).set('X-Idempotency-Key', key).send(body);
      expect([again.status, again.headers['idempotent-replayed'], again.body.id]).to.deep.equal([
        201,
        'true',
        retry.body.id,
      ]);
      expect(await operationsFrom(source.id)).to.have.length(before + 1);
    },
  );

  it(
    'a sandbox payment whose request died after the payment was recorded and signalled: the retry records ' +
      'nothing twice',
    async () => {
      const { http } = await stack();
      const q = await quote(c, { accountId: source.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '30.00' });
      const dep = await http
        .post('/api/operations/deposit')
        .set(c.auth)
        .set(idem())
        .send({ accountId: source.id, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } });
      expect(dep.status).to.equal(201);
      const key = randomUUID();
      const body = { amount: { value: '30.00', asset: 'BRL' } };

      // The payment commits in its own transaction (the workflow must see it), the workflow reconciles it, and
      // the process dies before the key's result commits.
      await postExpectingNoAnswer(
        `${crashBeforePayment.url}/api/sandbox/operations/${dep.body.id}/inbound-payment`,
        c,
        key,
        body,
      );
      await exitWithin(crashBeforePayment);
      await untilStatus(c, dep.body.id, 'COMPLETED');

      // Without the key naming the payment, this retry would have recorded 30.00 again (unmatched, the deposit done).
      const retry = await http
        .post(`/api/sandbox/operations/${dep.body.id}/inbound-payment`)
        .set(c.auth)
        .set('X-Idempotency-Key', key)
        .send(body);
      expect(retry.status, JSON.stringify(retry.body)).to.equal(200);
      expect(retry.headers['idempotent-replayed']).to.equal(undefined);
      expect(retry.body).to.deep.include({ status: 'MATCHED', operationId: dep.body.id });
      expect(retry.body.amount.value).to.equal('30.00');
      const done = await untilStatus(c, dep.body.id, 'COMPLETED');
      expect(done.transactions.map((t: { amount: { value: string } }) => t.amount.value)).to.deep.equal(['30.00']);
      const payments = await sql<{ n: string }>('select count(*) as n from inbound_payments where operation_id = ?', [
        dep.body.id,
      ]);
      expect(Number(payments[0].n)).to.equal(1);
      const replay = await http
        .post(`/api/sandbox/operations/${dep.body.id}/inbound-payment`)
        .set(c.auth)
        .set('X-Idempotency-Key', key)
        .send(body);
      expect([replay.status, replay.headers['idempotent-replayed']]).to.deep.equal([200, 'true']);
    },
  );
  it(
    'a sandbox decision whose request died after it was applied: the key with another decision is 422, the ' +
      'retry of the first answers what was applied',
    async () => {
      const { http } = await stack();
      const account = await createAccount(c, { assets: ['BRL'] });
      await uploadAllDocuments(c, account.id);
      await submitReview(c, account.id);
      const key = randomUUID();
      const review = `/api/sandbox/accounts/${account.id}/review`;

      // The approval commits as a decision, the workflow applies it, and the process dies before the key's answer.
      await postExpectingNoAnswer(`${crashBeforeDecision.url}${review}`, c, key, { decision: 'APPROVE' });
      await exitWithin(crashBeforeDecision);
      await eventually(
        () => getAccount(c, account.id),
        (a) => a.currentState.status === 'ACTIVE',
      );

      // Not a retry: another request under the key. It must neither be answered with the approval as if it had
      // rejected, nor take the key from the request that took effect.
      const other = await http
        .post(review)
        .set(c.auth)
        .set('X-Idempotency-Key', key)
        .send({ decision: 'REJECT', reason: 'changed our mind' });
      expect([other.status, other.body.code], JSON.stringify(other.body)).to.deep.equal([
        422,
        'IDEMPOTENCY_KEY_REUSED',
      ]);

      const retry = await http.post(review).set(c.auth).set('X-Idempotency-Key', key).send({ decision: 'APPROVE' });
      expect(retry.status, JSON.stringify(retry.body)).to.equal(200);
      expect(retry.body.currentState.status).to.equal('ACTIVE');
      const again = await http.post(review).set(c.auth).set('X-Idempotency-Key', key).send({ decision: 'APPROVE' });
      expect([again.status, again.headers['idempotent-replayed']]).to.deep.equal([200, 'true']);
      expect((await getAccount(c, account.id)).currentState.status).to.equal('ACTIVE');
    },
  );
});
