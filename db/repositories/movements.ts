// Settled movements and their daily totals (reports). How it reaches Postgres: one hand-written statement of the
// caller's batch (db/batch.ts), in the transaction that completes the operation. Tenant: the rows carry the
// operation's customer; the operation was read by its workflow's id (a worker acting system-wide).
import type { SqlBatch } from '../batch';
import type { Operation } from '../entities/operation';
import { movementLegs } from '../../domain/movements';

/**
 * Writes the operation's settled movements and adds them to the daily totals, in the caller's transaction:
 * the one that moves the operation to COMPLETED, so a report sees both sides of a transfer or neither.
 * A movement already written (a retried completion) is skipped, and only newly written ones reach the totals.
 *
 * A day's row is keyed by the md5 of its tag set (`tags_key`, a generated column), never by the tags themselves: a tag
 * set past what one btree entry holds (2704 bytes) would fail the statement, and with it every retry of the step
 * that settles the operation (decision 0217).
 *
 * Lock order: the caller has already updated the balance rows of every (account, asset) below, so two
 * transactions touching the same daily total are already queued on that balance row and cannot deadlock here.
 */
export function addMovements(batch: SqlBatch, op: Operation, completedAt: Date): void {
  const legs = movementLegs(op);
  const tags = JSON.stringify(op.tags.map((t) => ({ key: t.key, value: t.value })));
  const day = completedAt.toISOString().slice(0, 10); // the UTC day
  // One statement: the daily totals take exactly the rows the insert wrote (none on a retry).
  batch.add(
    `with written as (
       insert into movements (operation_id, account_id, asset, direction, customer_id, amount, completed_at, tags)
       values ${legs.map(() => '(?, ?, ?, ?, ?, ?, ?, ?::jsonb)').join(', ')}
       on conflict do nothing
       returning customer_id, account_id, asset, direction, tags, amount
     )
     insert into movement_days (customer_id, day, account_id, asset, direction, tags, sum, count)
     select customer_id, ?::date, account_id, asset, direction, tags, amount, 1 from written
     on conflict (customer_id, day, account_id, asset, direction, tags_key)
     do update set sum = movement_days.sum + excluded.sum, count = movement_days.count + excluded.count`,
    [
      ...legs.flatMap((l) => [
        op.id,
        l.accountId,
        l.asset,
        l.direction,
        op.customerId,
        l.amount.toFixed(),
        completedAt,
        tags,
      ]),
      day,
    ],
  );
}
