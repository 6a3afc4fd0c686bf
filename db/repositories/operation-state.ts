// An operation's state as one statement of the caller's batch (db/batch.ts), by primary key: the caller has
// already read the row (locked, in its tenant's scope), so no tenant condition is added here.
import type { SqlBatch } from '../batch';
import type { Operation } from '../entities';

/** Writes back what a step changes on an operation: its status and history, its transactions. */
export function addOperationState(batch: SqlBatch, op: Operation): void {
  batch.add('update operations set status = ?, states = ?::jsonb, transactions = ?::jsonb, updated_at = ? where id = ?', [
    op.status,
    JSON.stringify(op.states),
    JSON.stringify(op.transactions),
    op.updatedAt,
    op.id,
  ]);
}
