import { randomUUID } from 'node:crypto';
import type { Em } from '../orm';
import { DomainEventSchema, DomainEvent } from '../entities';
import type { WorkflowStartRequest } from '../../api/services/workflow-starts';
import { fanOutEvent } from '../../events/deliveries';

/**
 * Records an event in the caller's transaction, with its webhook deliveries (events/deliveries.ts). `dedupeKey`
 * (unique) names the transition, e.g. `${operationId}:COMPLETED`, so a retried activity cannot record it twice:
 * callers only write the event together with the state change, and the state change itself is skipped on retry.
 * Returns the delivery workflows to start once the transaction has committed (the outbox relay starts them
 * otherwise).
 */
export async function recordEvent(
  em: Em,
  e: Pick<DomainEvent, 'customerId' | 'type' | 'resourceType' | 'resourceId' | 'payload' | 'dedupeKey'> & { atTime: Date },
): Promise<WorkflowStartRequest[]> {
  const event = em.create(DomainEventSchema, { id: randomUUID(), ...e, createdAt: new Date() });
  return fanOutEvent(em, event);
}
