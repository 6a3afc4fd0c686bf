import { randomUUID } from 'node:crypto';
import type { Em } from '../orm';
import type { DomainEvent } from '../entities';
import { addEventWithDeliveries } from '../../events/deliveries';
import { SqlBatch } from '../batch';

type NewEvent = Pick<DomainEvent, 'customerId' | 'type' | 'resourceType' | 'resourceId' | 'payload' | 'dedupeKey'> & { atTime: Date };

/**
 * Records an event in the caller's transaction, with its webhook deliveries (events/deliveries.ts), whose
 * workflows the workers of `taskQueue` start once it commits. `dedupeKey` (unique) names the transition, e.g.
 * `${operationId}:COMPLETED`, so a retried activity cannot record it twice: callers only write the event together
 * with the state change, and the state change itself is skipped on retry.
 */
export async function recordEvent(em: Em, taskQueue: string, e: NewEvent): Promise<void> {
  const batch = new SqlBatch();
  addEvent(batch, taskQueue, e);
  await batch.run(em);
}

/** recordEvent as a statement of the caller's batch. */
export function addEvent(batch: SqlBatch, taskQueue: string, e: NewEvent): void {
  addEventWithDeliveries(batch, taskQueue, { id: randomUUID(), ...e, createdAt: new Date() });
}
