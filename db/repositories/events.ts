import { randomUUID } from 'node:crypto';
import type { Em } from '../orm';
import type { DomainEvent } from '../entities';
import type { WorkflowStartRequest } from '../../api/services/workflow-starts';
import { addEventWithDeliveries } from '../../events/deliveries';
import { SqlBatch } from '../batch';

type NewEvent = Pick<DomainEvent, 'customerId' | 'type' | 'resourceType' | 'resourceId' | 'payload' | 'dedupeKey'> & { atTime: Date };

/**
 * Records an event in the caller's transaction, with its webhook deliveries (events/deliveries.ts). `dedupeKey`
 * (unique) names the transition, e.g. `${operationId}:COMPLETED`, so a retried activity cannot record it twice:
 * callers only write the event together with the state change, and the state change itself is skipped on retry.
 * Returns the delivery workflows to start once the transaction has committed (the outbox relay starts them
 * otherwise).
 */
export async function recordEvent(em: Em, e: NewEvent): Promise<WorkflowStartRequest[]> {
  const batch = new SqlBatch();
  const starts = addEvent(batch, e);
  await batch.run(em);
  return starts();
}

/** recordEvent as a statement of the caller's batch; the starts are known once the batch has run. */
export function addEvent(batch: SqlBatch, e: NewEvent): () => WorkflowStartRequest[] {
  return addEventWithDeliveries(batch, { id: randomUUID(), ...e, createdAt: new Date() });
}
