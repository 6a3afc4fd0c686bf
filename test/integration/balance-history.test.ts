import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { SqlBatch } from '../../db/batch';
import { addPosting } from '../../db/repositories/ledger';
import { inTransaction } from '../../db/transaction';
import { Dec } from '../../domain/money';
import { systemEm, type Em } from '../../db/orm';
import { BACKFILL_BALANCE_HISTORY_SQL } from '../../db/migrations/Migration20261126200000BalanceHistory';
import { activeAccount } from '../helpers/fixtures';
import { fund, quote, untilStatus } from '../helpers/money';
import { idem, newCustomer, stack } from '../helpers/stack';

const balancesAt = async (auth: Record<string, string>, accountId: string, asOf?: string) => {
  const req = (await stack()).http.get(`/api/accounts/${accountId}/balances`).set(auth);
  return asOf === undefined ? req : req.query({ asOf });
};
const totalOf = (body: { balances: Array<{ asset: string; total: { value: string } }> }, asset: string) =>
  body.balances.find((b) => b.asset === asset)?.total.value;

describe('Balances at an instant (asOf)', function () {
  it('answers each balance as it stood before the instant, exact to the posting', async () => {
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL']);
    const before = new Date().toISOString();
    await fund(c, account.id, 'BRL', '100.00');
    const between = new Date().toISOString();
    await fund(c, account.id, 'BRL', '25.50');
    const after = new Date().toISOString();

    expect(totalOf((await balancesAt(c.auth, account.id, before)).body, 'BRL')).to.equal('0.00');
    expect(totalOf((await balancesAt(c.auth, account.id, between)).body, 'BRL')).to.equal('100.00');
    expect(totalOf((await balancesAt(c.auth, account.id, after)).body, 'BRL')).to.equal('125.50');
    expect(totalOf((await balancesAt(c.auth, account.id)).body, 'BRL')).to.equal('125.50');

    // The instant of the posting itself: what stood before it, then what it left one microsecond later.
    const { services } = await stack();
    const [first] = (await systemEm(services.orm).execute(
      `select to_char(booked_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at from ledger_entries
       where account_id = ? and asset = 'BRL' order by balance_seq limit 1`,
      [account.id],
    )) as Array<{ at: string }>;
    const justAfter = new Date(Date.parse(first.at.slice(0, 23) + 'Z') + 1).toISOString();
    expect(totalOf((await balancesAt(c.auth, account.id, first.at)).body, 'BRL')).to.equal('0.00');
    expect(totalOf((await balancesAt(c.auth, account.id, justAfter)).body, 'BRL')).to.equal('100.00');
  });

  it('shows a swap whole or not at all at every instant, the instants of its own entries included', async () => {
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL', 'USD']);
    await fund(c, account.id, 'BRL', '100.00');
    const { http, services } = await stack();
    const q = await quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '50.00' });
    const res = await http
      .post('/api/operations/swap')
      .set(c.auth)
      .set(idem())
      .send({ accountId: account.id, quoteId: q.id });
    expect(res.status).to.equal(201);
    await untilStatus(c, res.body.id, 'COMPLETED');
    const micros = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;
    const instants = (await systemEm(services.orm).execute(
      `select distinct to_char(e.booked_at at time zone 'UTC', ${micros}) as at,
         to_char((e.booked_at + interval '1 microsecond') at time zone 'UTC', ${micros}) as after
       from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
       where t.key = ? and e.account_id = ?`,
      [`${res.body.id}:settle`, account.id],
    )) as Array<{ at: string; after: string }>;
    const before = { BRL: '100.00', USD: '0.00' };
    const after = { BRL: '50.00', USD: q.targetAmount.value };
    for (const instant of instants.flatMap((i) => [i.at, i.after])) {
      const body = (await balancesAt(c.auth, account.id, instant)).body;
      const seen = { BRL: totalOf(body, 'BRL'), USD: totalOf(body, 'USD') };
      expect([before, after], `the balances at ${instant}`).to.deep.include(seen);
    }
  });

  it('refuses a future or malformed instant with 400 VALIDATION_ERROR, and another customer gets 404', async () => {
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL']);
    const future = await balancesAt(c.auth, account.id, new Date(Date.now() + 60_000).toISOString());
    expect(future.status).to.equal(400);
    expect(future.body.code).to.equal('VALIDATION_ERROR');
    for (const bad of ['2026-11-01', '2026-02-30T00:00:00Z', '2026-11-01T00:00:00+01:00']) {
      const res = await balancesAt(c.auth, account.id, bad);
      expect(res.status, bad).to.equal(400);
      expect(res.body.code, bad).to.equal('VALIDATION_ERROR');
    }
    const other = await newCustomer('Other Ltda');
    expect((await balancesAt(other.auth, account.id, new Date().toISOString())).status).to.equal(404);
  });

  it("the migration's backfill computes the history the postings wrote", async () => {
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL']);
    await fund(c, account.id, 'BRL', '10.00');
    await fund(c, account.id, 'BRL', '7.25');
    const em = systemEm((await stack()).services.orm);
    const read = () =>
      em.execute(
        `select id, balance_seq::text, available_after::text, held_after::text from ledger_entries
         where account_id = ? order by id`,
        [account.id],
      );
    const written = await read();
    expect(written).to.have.length.greaterThan(1);
    await em.execute(
      `update ledger_entries set balance_seq = null, booked_at = null, available_after = null, held_after = null
       where account_id = ?`,
      [account.id],
    );
    await em.execute(BACKFILL_BALANCE_HISTORY_SQL);
    expect(await read()).to.deep.equal(written);
  });

  it('answers an instant once every posting booked before it has committed: the answer never changes', async () => {
    const c = await newCustomer();
    const a = (await activeAccount(c, ['BRL'])).id;
    const b = (await activeAccount(c, ['BRL'])).id;
    await fund(c, a, 'BRL', '50.00');
    const { services } = await stack();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let booked!: () => void;
    const isBooked = new Promise<void>((r) => (booked = r));
    // A transfer of 7.00 a→b booked now, its transaction held open while the balance at an instant after it is asked.
    const held = inTransaction(systemEm(services.orm), async (tx: Em) => {
      const batch = new SqlBatch();
      addPosting(batch, {
        key: `test:held:${randomUUID()}`,
        operationId: null,
        customerId: c.customerId,
        description: 'held open across the read',
        postings: [
          { accountId: a, book: 'available', asset: 'BRL', amount: new Dec('-7.00') },
          { accountId: b, book: 'available', asset: 'BRL', amount: new Dec('7.00') },
        ],
      });
      await batch.run(tx);
      // A read sends the batch's writes now (they would otherwise travel with the COMMIT): the posting is booked.
      await tx.execute('select 1');
      booked();
      await released;
    });
    await isBooked;
    const instant = new Date(Date.now() + 5).toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const asked = balancesAt(c.auth, a, instant).then((res) => res);
    await new Promise((r) => setTimeout(r, 300));
    release();
    await held;
    const answer = await asked;
    expect(answer.status).to.equal(200);
    expect(totalOf(answer.body, 'BRL'), 'the answer given while the posting was open').to.equal('43.00');
    expect(totalOf((await balancesAt(c.auth, a, instant)).body, 'BRL')).to.equal('43.00');
    expect(totalOf((await balancesAt(c.auth, b, instant)).body, 'BRL')).to.equal('7.00');
  });
});
