import { randomUUID } from 'node:crypto';
import type { Config } from '../../config';
import type { Em } from '../orm';
import type { DomainEvent } from '../entities';
import { addEventWithDeliveries } from '../../events/deliveries';
import { SqlBatch } from '../batch';

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
