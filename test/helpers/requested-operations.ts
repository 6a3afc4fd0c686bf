// Operations of a customer in REQUESTED, written straight to the tables, for the relay's per-customer window
// (db/repositories/outbox.ts, `claimStarts`): with an outbox row they wait to be started, without one they are
// started and not yet run. They are stand-ins, with no money, history or states: one that "runs" is deleted rather
// than completed (a COMPLETED operation with no COMPLETED state is one the movements backfill cannot read), and
// `removeRequestedOperations` deletes the rest once a test file is done.
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { inTransaction } from '../../db/transaction';
import { SqlBatch } from '../../db/batch';
import { operationWorkflowId } from '../../workflows/ids';
import { createCustomer } from '../../services/auth';
import { stack } from './stack';

let clock = Date.now() - 3_600_000;
const written: string[] = [];

/** A customer of its own (no token: the tests that use it never call the API). */
export async function newCustomerId(): Promise<string> {
  const { services } = await stack();
  return (await createCustomer(services.orm, 'Window Ltda')).customerId;
}

/**
 * `n` TRANSFER operations of `customerId` in REQUESTED, each created a millisecond after every operation this helper
 * wrote before (so the order of calls is the order of age). With `queue`, each has its outbox row on that queue,
 * of a workflow type no worker runs; without, none. Returns their workflow ids, oldest first.
 */
export async function requestedOperations(customerId: string, n: number, queue?: string): Promise<string[]> {
  const { services } = await stack();
  const ids = Array.from({ length: n }, () => randomUUID());
  written.push(...ids);
  await inTransaction(systemEm(services.orm), async (tx) => {
    const batch = new SqlBatch();
    for (const id of ids) {
      const createdAt = new Date(++clock);
      batch.add(
        `insert into operations (id, customer_id, account_id, type, status, states, intent, quote_id, source_asset,
           source_amount, target_asset, target_amount, fees, transactions, tags, created_at, updated_at)
         values (?, ?, ?, 'TRANSFER', 'REQUESTED', '[]', '{}', ?, 'BRL', 1, 'BRL', 1, '[]', '[]', '[]', ?, ?)`,
        [id, customerId, randomUUID(), randomUUID(), createdAt, createdAt],
      );
      if (queue) {
        batch.add(
          `insert into workflow_starts (workflow_id, workflow_type, task_queue, args, search_attributes, created_at)
           values (?, 'windowTestWorkflow', ?, '[]'::jsonb, ?::jsonb, ?::timestamptz)`,
          [operationWorkflowId(id), queue, JSON.stringify({ CustomerId: customerId }), createdAt],
        );
      }
    }
    await batch.run(tx);
  });
  return ids.map(operationWorkflowId);
}

/** The operation of `workflowId` ran: it leaves REQUESTED, and its customer's window. */
export async function runOperation(workflowId: string): Promise<void> {
  const { services } = await stack();
  const id = workflowId.slice(operationWorkflowId('').length);
  await systemEm(services.orm).execute('delete from operations where id = ?', [id]);
}

/** Deletes every operation this helper wrote, and their outbox rows. */
export async function removeRequestedOperations(): Promise<void> {
  if (!written.length) return;
  const { services } = await stack();
  const ids = written.splice(0);
  const em = systemEm(services.orm);
  await em.execute('delete from workflow_starts where workflow_id in (?)', [ids.map(operationWorkflowId)]);
  await em.execute('delete from operations where id in (?)', [ids]);
}
