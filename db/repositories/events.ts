import { randomUUID } from 'node:crypto';
import type { Config } from '../../config';
import type { Em } from '../orm';
import type { DomainEvent } from '../entities';
import { addEventWithDeliveries } from '../../events/deliveries';
import { SqlBatch } from '../batch';
import { rawQuery } from '../raw';

type NewEvent = Pick<DomainEvent, 'customerId' | 'type' | 'resourceType' | 'resourceId' | 'payload' | 'dedupeKey'> & { atTime: Date };

/** Where delivery workflows go: the config (a bare task queue name would too easily be the operations' queue). */
export type DeliveryQueues = Pick<Config, 'webhookTaskQueue'>;

/**
 * Records an event in the caller's transaction, with its webhook deliveries (events/deliveries.ts), whose
 * workflows the workers of the webhook task queue start once it commits. `dedupeKey` (unique) names the
 * transition, e.g. `${operationId}:COMPLETED`, so a retried activity cannot record it twice: callers only write the
 * event together with the state change, and the state change itself is skipped on retry.
 */
export async function recordEvent(em: Em, queues: DeliveryQueues, e: NewEvent): Promise<void> {
  const batch = new SqlBatch();
  addEvent(batch, queues, e);
  await batch.run(em);
}

/** recordEvent as a statement of the caller's batch. */
export function addEvent(batch: SqlBatch, queues: DeliveryQueues, e: NewEvent): void {
  addEventWithDeliveries(batch, queues.webhookTaskQueue, { id: randomUUID(), ...e, createdAt: new Date() });
}

// One purge statement deletes at most this many rows, so it never holds many row locks or a long transaction.
const PURGE_BATCH = 1000;

/**
 * Deletes events recorded before `cutoff` (EVENT_RETENTION_DAYS), across customers (a system-scoped
 * EntityManager), in batches of PURGE_BATCH until none is left; returns how many went. Execution logs are not
 * touched: each keeps its own copy of the body it sent (`execution_logs.payload`), so logs, redelivery and recover
 * never need the event row, and they are kept as before. Straight through the driver, outside any transaction:
 * each batch commits on its own, and several workers purging at once only find fewer rows.
 */
export async function purgeEventsBefore(em: Em, cutoff: Date): Promise<number> {
  let purged = 0;
  for (;;) {
    const rows = await rawQuery<{ n: number }>(
      em,
      `with gone as (
         delete from events where id in (select id from events where created_at < $1 order by created_at limit $2 for update skip locked)
         returning 1
       )
       select count(*)::int as n from gone`,
      [cutoff, PURGE_BATCH],
    );
    purged += rows[0].n;
    if (rows[0].n < PURGE_BATCH) return purged;
  }
}
