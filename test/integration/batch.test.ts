// db/batch.ts and the ledger posting written as a batch, against real Postgres: statements run in order with
// their own rows, a key posted before writes nothing, and only a balance CHECK becomes INSUFFICIENT_FUNDS.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import type { Em } from '../../db/orm';
import { SqlBatch } from '../../db/batch';
import { addPosting, LedgerWrite } from '../../db/repositories/ledger';
import { recordEvent } from '../../db/repositories/events';
import { inTransaction } from '../../db/transaction';
import { Dec } from '../../domain/money';
import { CambioError } from '../../domain/errors';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, fund } from '../helpers/money';
import { newCustomer, stack } from '../helpers/stack';

describe('statement batches', () => {
  let em: () => Em;

  before(async () => {
    const { services } = await stack();
    em = () => systemEm(services.orm);
  });

  /** A posting alone in its batch. */
  async function post(tx: Em, write: LedgerWrite): Promise<boolean> {
    const batch = new SqlBatch();
    const posted = addPosting(batch, write);
    await batch.run(tx);
    return posted();
  }

  async function fundedAccount(value: string) {
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL', 'USD'] as never);
    await fund(c, account.id, 'BRL', value);
    return { c, account };
  }

  const hold = (customerId: string, accountId: string, key: string, value: string) => ({
    key,
    operationId: null,
    customerId,
    description: 'test hold',
    postings: [
      { accountId, book: 'available', asset: 'BRL', amount: new Dec(value).neg() },
      { accountId, book: 'held', asset: 'BRL', amount: new Dec(value) },
    ],
  });

  it('runs its statements in order, in the caller transaction, each with its own rows', async () => {
    const rows = await inTransaction(em(), async (tx) => {
      const batch = new SqlBatch();
      const a = batch.add<{ n: number }>('create temporary table batch_probe (n int) on commit drop');
      const b = batch.add<{ n: number }>('insert into batch_probe values (?), (?) returning n', [1, 2]);
      const c = batch.add<{ n: number }>('select sum(n)::int as n from batch_probe');
      await batch.run(tx);
      const single = new SqlBatch();
      const d = single.add<{ n: number }>('select count(*)::int as n from batch_probe where n = ?', [2]);
      await single.run(tx);
      return [a.rows, b.rows, c.rows, d.rows];
    });
    expect(rows).to.deep.equal([[], [{ n: 1 }, { n: 2 }], [{ n: 3 }], [{ n: 1 }]]);
  });

  it('posts once per key: a second posting with the key writes no entry and moves no balance', async () => {
    const { c, account } = await fundedAccount('100.00');
    const key = `test:${randomUUID()}`;
    expect(await inTransaction(em(), (tx) => post(tx, hold(c.customerId, account.id, key, '30.00')))).to.equal(true);
    const again = await inTransaction(em(), async (tx) => {
      const batch = new SqlBatch();
      const posted = addPosting(batch, hold(c.customerId, account.id, key, '30.00'));
      await batch.run(tx);
      return posted();
    });
    expect(again).to.equal(false);
    const entries = (await em().execute(
      'select count(*)::int as n from ledger_entries e join ledger_transactions t on t.id = ' +
        'e.transaction_id where t.key = ?',
      [key],
    )) as Array<{ n: number }>;
    expect(entries[0].n).to.equal(2);
    expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '70.00', held: '30.00', total: '100.00' });
    await assertLedgerBalanced();
  });

  it(
    'answers a balance that would go negative with INSUFFICIENT_FUNDS for its asset, and any other CHECK as ' +
      'itself',
    async () => {
      const { c, account } = await fundedAccount('10.00');
      const short = await inTransaction(em(), (tx) =>
        post(tx, hold(c.customerId, account.id, `test:${randomUUID()}`, '10.01')),
      ).catch((e) => e);
      expect(short).to.be.instanceOf(CambioError);
      expect(short.code).to.equal('INSUFFICIENT_FUNDS');
      expect(short.details).to.deep.equal({ asset: 'BRL' });

      // A posting that would succeed, then a movement breaking its own CHECK (amount > 0) in the same batch.
      const other = await inTransaction(em(), async (tx) => {
        const batch = new SqlBatch();
        addPosting(batch, hold(c.customerId, account.id, `test:${randomUUID()}`, '1.00'));
        batch.add(
          `insert into movements (operation_id, account_id, asset, direction, customer_id, amount, ` +
            `completed_at, tags) values (?, ?, 'BRL', 'INFLOW', ?, -1, now(), '[]')`,
          [randomUUID(), account.id, c.customerId],
        );
        await batch.run(tx);
      }).catch((e) => e);
      expect(other).not.to.be.instanceOf(CambioError);
      expect(other.code).to.equal('23514');
      // Both rolled back: nothing held.
      expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '10.00', held: '0.00', total: '10.00' });
    },
  );

  it(
    'fans an event out to the live subscriptions of its customer that list its type, each with its outbox ' + 'row',
    async () => {
      const a = await newCustomer();
      const b = await newCustomer();
      const subscription = async (customerId: string, resources: unknown, deleted = false) => {
        const id = randomUUID();
        await em().execute(
          `insert into webhook_subscriptions (id, customer_id, url, include_all, resources, allow_retry,
          secret_encrypted, deleted_at, created_at, updated_at)
         values (?, ?, 'https://example.com/h', false, ?::jsonb, true, 'x', ${deleted ? 'now()' : 'null'}, now(),
           now())`,
          [id, customerId, JSON.stringify(resources)],
        );
        return id;
      };
      const wants = await subscription(a.customerId, [
        { name: 'BENEFICIARY', events: ['BENEFICIARY_CREATED'] },
        { name: 'OPERATION', events: ['OPERATION_FAILED', 'OPERATION_COMPLETED'] },
      ]);
      await subscription(a.customerId, [{ name: 'OPERATION', events: ['OPERATION_FAILED'] }]);
      await subscription(a.customerId, [{ name: 'OPERATION', events: ['OPERATION_COMPLETED'] }], true);
      await subscription(b.customerId, [{ name: 'OPERATION', events: ['OPERATION_COMPLETED'] }]);
      const resourceId = randomUUID();
      // A queue no relay serves: the rows stay for the checks below.
      const taskQueue = `cambio-no-relay-${randomUUID()}`;
      await inTransaction(em(), (tx) =>
        recordEvent(
          tx,
          { webhookTaskQueue: taskQueue },
          {
            customerId: a.customerId,
            type: 'OPERATION_COMPLETED',
            resourceType: 'OPERATION',
            resourceId,
            dedupeKey: `${resourceId}:COMPLETED`,
            atTime: new Date(),
            payload: { id: resourceId },
          },
        ),
      );
      const logs = (await em().execute(
        `select l.id, l.subscription_id, l.status, l.attempts, l.message_id, l.payload, s.workflow_type, s.task_queue,
        s.args, s.search_attributes
       from execution_logs l join events e on e.id = l.event_id left join workflow_starts s on s.workflow_id =
         'webhook-delivery-' || l.id
       where e.resource_id = ?`,
        [resourceId],
      )) as Array<Record<string, any>>;
      expect(logs.map((l) => l.subscription_id)).to.deep.equal([wants]);
      const [log] = logs;
      expect(log).to.deep.include({
        status: 'PENDING',
        attempts: 0,
        payload: JSON.stringify({ id: resourceId }),
        workflow_type: 'webhookDeliveryWorkflow',
        task_queue: taskQueue,
      });
      expect(log.message_id).to.match(/^msg_[0-9a-f]{32}$/);
      expect(log.args).to.deep.equal([{ executionLogId: log.id }]);
      expect(log.search_attributes).to.deep.equal({ CustomerId: a.customerId });
      await em().execute(`delete from workflow_starts where workflow_id = ?`, [`webhook-delivery-${log.id}`]);
    },
  );
});
