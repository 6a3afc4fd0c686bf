// Transfers in both directions between two accounts all touch the same two balance rows: with rows taken in
// one global order they queue instead of deadlocking, and a conflict that still happens is retried inside the
// transaction wrapper instead of answering 500.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { inTransaction, isRetryableConflict } from '../../db/transaction';
import { activeAccount } from '../helpers/fixtures';
import { balance, fund, getOp } from '../helpers/money';
import { eventually, idem, newCustomer, stack } from '../helpers/stack';

const deadlocks = async (): Promise<number> => {
  const { services } = await stack();
  const rows = (await systemEm(services.orm).execute(
    `select deadlocks::int as n from pg_stat_database where datname = current_database()`,
  )) as Array<{ n: number }>;
  return rows[0].n;
};

describe('ledger under contention', function () {
  this.timeout(90000);

  it('20 concurrent transfers A→B and B→A: all 201 at once, all COMPLETED, no deadlock, balances exact', async () => {
    const { http } = await stack();
    const c = await newCustomer('Contention SA');
    const [a, b] = await Promise.all([activeAccount(c, ['BRL']), activeAccount(c, ['BRL'])]);
    await Promise.all([fund(c, a.id, 'BRL', '1000.00'), fund(c, b.id, 'BRL', '1000.00')]);
    const deadlocksBefore = await deadlocks();

    const started = Date.now();
    const transfer = (from: string, to: string, value: string) =>
      http
        .post('/api/operations/transfer')
        .set(c.auth)
        .set(idem())
        .send({ sourceAccountId: from, targetAccountId: to, amount: { value, asset: 'BRL' } });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0 ? transfer(a.id, b.id, '10.00') : transfer(b.id, a.id, '7.00'),
      ),
    );
    expect(results.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
    const ids = results.map((r) => r.body.id as string);
    await eventually(
      () => Promise.all(ids.map(async (id) => (await getOp(c, id)).currentState.status)),
      (statuses) => statuses.every((s) => s === 'COMPLETED'),
      30000,
      100,
    );
    const elapsed = Date.now() - started;
    // Before lock ordering 20 of them took 35-55 s (deadlock_timeout 1 s per cycle, then Temporal's back-off).
    expect(elapsed, 'settled without deadlock waits').to.be.below(15000);

    // 1000 − 10 × 10.00 + 10 × 7.00 and the mirror.
    expect(await balance(c, a.id, 'BRL')).to.deep.include({ available: '970.00', held: '0.00' });
    expect(await balance(c, b.id, 'BRL')).to.deep.include({ available: '1030.00', held: '0.00' });
    // Statistics reach pg_stat_database asynchronously: give them a moment before trusting a zero.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await deadlocks()) - deadlocksBefore, 'Postgres detected no deadlock').to.equal(0);
  });

  it('runs a deadlock victim again: a real 40P01 between two transactions, both end committed', async () => {
    const { services } = await stack();
    const em = () => systemEm(services.orm);
    await em().execute(`create table if not exists contention_probe (id int primary key, n int not null)`);
    await em().execute(
      `insert into contention_probe (id, n) values (1, 0), (2, 0) on conflict (id) do update set n = 0`,
    );
    let retries = 0;
    // Each takes one row, waits until the other has its first row too, then wants the other's: a deadlock on
    // the first attempt; Postgres aborts one (after deadlock_timeout), which inTransaction runs again.
    let arrived = 0;
    const bothHoldOne = () =>
      new Promise<void>((resolve) => {
        arrived++;
        const wait = () => (arrived >= 2 ? resolve() : setTimeout(wait, 5));
        wait();
      });
    const crossing = (first: number, second: number) =>
      inTransaction(
        em(),
        async (tx) => {
          await tx.execute(`update contention_probe set n = n + 1 where id = ?`, [first]);
          await bothHoldOne();
          await tx.execute(`update contention_probe set n = n + 1 where id = ?`, [second]);
        },
        { onRetry: (err) => (isRetryableConflict(err) ? retries++ : undefined) },
      );
    await Promise.all([crossing(1, 2), crossing(2, 1)]);
    expect(retries, 'one side was the deadlock victim and ran again').to.equal(1);
    const rows = (await em().execute(`select id, n from contention_probe order by id`)) as Array<{
      id: number;
      n: number;
    }>;
    expect(
      rows.map((r) => r.n),
      'both transactions committed exactly once',
    ).to.deep.equal([2, 2]);
    await em().execute(`drop table contention_probe`);
  });
});
