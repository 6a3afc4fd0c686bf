// db/transaction.ts against real Postgres: savepoints inside an open transaction, the first statement sent with
// its BEGIN, and re-reads on the same transaction.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import type { Em } from '../../db/orm';
import { freshEm, inOpenSavepoint, inTransaction, openSavepoint, rollbackToSavepoint } from '../../db/transaction';
import { stack } from '../helpers/stack';

describe('inTransaction', () => {
  let em: () => Em;
  // What another connection sees.
  const visible = async (n: number) =>
    ((await em().execute('select count(*)::int as c from tx_probe where n = ?', [n])) as Array<{ c: number }>)[0].c;

  before(async () => {
    const { services } = await stack();
    em = () => systemEm(services.orm);
    await em().execute('create table if not exists tx_probe (n int not null)');
  });
  after(async () => {
    await em().execute('drop table if exists tx_probe');
  });

  it('a nested transaction is a savepoint: visible to others only at the outer COMMIT, and a failure rolls back to it', async () => {
    const seen: number[] = [];
    await inTransaction(em(), async (outer) => {
      await inTransaction(outer, async (inner) => {
        await inner.execute('insert into tx_probe (n) values (1)');
      });
      await inTransaction(outer, async (inner) => {
        await inner.execute('insert into tx_probe (n) values (2)');
        throw new Error('business failure');
      }).catch(() => undefined);
      // The first savepoint is released but the outer transaction is still open: nothing is visible yet.
      seen.push(await visible(1));
    });
    expect(seen).to.deep.equal([0]);
    expect(await visible(1), 'kept by the outer COMMIT').to.equal(1);
    expect(await visible(2), 'the failed savepoint rolled back').to.equal(0);

    await inTransaction(em(), async (tx) => {
      await tx.execute('insert into tx_probe (n) values (3)');
      throw new Error('5xx');
    }).catch(() => undefined);
    expect(await visible(3)).to.equal(0);
  });

  it('inOpenSavepoint: a savepoint the caller opened keeps a success and, rolled back, drops the failure', async () => {
    await inTransaction(em(), async (tx) => {
      await tx.execute(`insert into tx_probe (n) values (5); ${openSavepoint('probe')}`);
      await inOpenSavepoint(tx, async (inner) => {
        await inner.execute('insert into tx_probe (n) values (6)');
      });
      await tx.execute(openSavepoint('probe'));
      const failure = await inOpenSavepoint(tx, async (inner) => {
        await inner.execute('insert into tx_probe (n) values (7)');
        await inner.execute('select 1 / 0'); // aborts the transaction, as a failed business statement does
      }).catch((err: Error) => err);
      expect(failure).to.be.an('error');
      // The rollback to the savepoint comes first in the caller's next message and makes the transaction usable.
      await tx.execute(`${rollbackToSavepoint('probe')}; insert into tx_probe (n) values (8)`);
    });
    expect([await visible(5), await visible(6), await visible(7), await visible(8)]).to.deep.equal([1, 1, 0, 1]);
  });

  it('runs the first statement of a transaction, sent with its BEGIN (db/deferred-begin.ts), inside it', async () => {
    const first = await inTransaction(em(), async (tx) => tx.execute('select 42 as x'));
    expect(first, 'the first statement answers with its own rows').to.deep.equal([{ x: 42 }]);
    await inTransaction(em(), async (tx) => {
      await tx.execute('insert into tx_probe (n) values (9)');
      throw new Error('rolled back');
    }).catch(() => undefined);
    expect(await visible(9), 'the first statement rolled back with its transaction').to.equal(0);
    const failed = await inTransaction(em(), async (tx) => tx.execute('select 1 / 0')).catch((err: Error) => err);
    expect(failed).to.be.an('error');
    // The connection that failed is back outside any transaction: what it writes now is visible to others at once.
    for (let i = 0; i < 3; i++) await em().execute('insert into tx_probe (n) values (10)');
    expect(await visible(10)).to.equal(3);
  });

  it('freshEm reads on the same transaction: it sees the uncommitted row, and another connection does not', async () => {
    await inTransaction(em(), async (tx) => {
      await tx.execute('insert into tx_probe (n) values (4)');
      const same = (await freshEm(tx).execute('select count(*)::int as c from tx_probe where n = 4')) as Array<{
        c: number;
      }>;
      expect(same[0].c).to.equal(1);
      expect(await visible(4)).to.equal(0);
    });
    expect(await visible(4)).to.equal(1);
  });
});
