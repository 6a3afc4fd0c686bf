import { randomUUID } from 'node:crypto';
import type { Em } from '../orm';
import { DomainEventSchema, DomainEvent } from '../entities';

/**
 * Records an event in the caller's transaction. `dedupeKey` (unique) names the transition, e.g.
 * `${operationId}:COMPLETED`, so a retried activity cannot record it twice: callers only write the event
 * together with the state change, and the state change itself is skipped on retry.
 */
export function recordEvent(
  em: Em,
  e: Pick<DomainEvent, 'customerId' | 'type' | 'resourceType' | 'resourceId' | 'payload' | 'dedupeKey'> & { atTime: Date },
): void {
  em.create(DomainEventSchema, { id: randomUUID(), ...e, createdAt: new Date() });
}
