// db/transaction.ts and db/keyed-transaction.ts against real Postgres: savepoints inside an open transaction, the
// first statement of a transaction, and re-reads on the same transaction.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import type { Em } from '../../db/orm';
import { freshEm, inTransaction } from '../../db/transaction';
import { inKeyedTransaction } from '../../db/keyed-transaction';
import { tenantEm } from '../../db/orm';
import { newCustomer } from '../helpers/stack';
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

  it(
    'a nested transaction is a savepoint: visible to others only at the outer COMMIT, and a failure rolls ' +
      'back to it',
    async () => {
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
    },
  );

  it('a keyed transaction keeps a success with its answer and, for a business error, only the answer', async () => {
    const { services } = await stack();
    const c = await newCustomer();
    const em = () => tenantEm(services.orm, c.customerId);
    const opts = {
      answerOf: (n: number) => ({ status: 201, body: { n } }),
      storedError: (err: unknown) =>
        (err as Error).message === 'business' ? { status: 422, body: { code: 'BUSINESS' } } : undefined,
    };
    const key = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const ok = await inKeyedTransaction(
      em(),
      { key: key(5), requestHash: 'h' },
      async (tx) => {
        await tx.execute('insert into tx_probe (n) values (5)');
        return 5;
      },
      opts,
    );
    expect(ok).to.deep.equal({ kind: 'done', result: 5 });
    const failed = await inKeyedTransaction(
      em(),
      { key: key(6), requestHash: 'h' },
      async (tx) => {
        await tx.execute('insert into tx_probe (n) values (6)');
        await tx.execute('select 1 / 0'); // aborts the transaction, as a failed business statement does
        return 6;
      },
      { ...opts, storedError: () => ({ status: 422, body: { code: 'BUSINESS' } }) },
    );
    expect(failed.kind).to.equal('failed');
    expect([await visible(5), await visible(6)]).to.deep.equal([1, 0]);
    const replays = await Promise.all(
      [5, 6].map((n) => inKeyedTransaction(em(), { key: key(n), requestHash: 'h' }, async () => 0, opts)),
    );
    expect(replays).to.deep.equal([
      { kind: 'replay', answer: { status: 201, body: { n: 5 } } },
      { kind: 'replay', answer: { status: 422, body: { code: 'BUSINESS' } } },
    ]);
    const other = await inKeyedTransaction(em(), { key: key(5), requestHash: 'other' }, async () => 0, opts);
    expect(other).to.deep.equal({ kind: 'reused' });
  });

  it(
    'runs the first statement of a transaction inside it, and a failed one leaves the connection outside ' + 'any',
    async () => {
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
    },
  );

  it(
    'freshEm reads on the same transaction: it sees the uncommitted row, ' + 'and another connection does not',
    async () => {
      await inTransaction(em(), async (tx) => {
        await tx.execute('insert into tx_probe (n) values (4)');
        const same = (await freshEm(tx).execute('select count(*)::int as c from tx_probe where n = 4')) as Array<{
          c: number;
        }>;
        expect(same[0].c).to.equal(1);
        expect(await visible(4)).to.equal(0);
      });
      expect(await visible(4)).to.equal(1);
    },
  );
});
