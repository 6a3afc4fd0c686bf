/**
 * The events API's reads of `events` (GET /api/events[/{id}]); recording, fan-out and the purge are events.ts.
 * One event through the ORM; the list page through the list machinery (one hand-written statement per page).
 * Tenant: the ORM's tenant filter for the one event; the list machinery adds the customer from the
 * EntityManager's scope.
 */
import { DomainEvent, DomainEventSchema } from '../entities';
import type { Em } from '../orm';
import type { ListResource } from './lists';

/** One event of the customer as stored now; null when it does not exist (or was purged). */
export function findEvent(em: Em, id: string): Promise<DomainEvent | null> {
  return em.findOne(DomainEventSchema, { id }, { refresh: true });
}

/**
 * The events list, filtered on its type (one of `types`: the catalogue is the webhooks' to say) and on the
 * recording time, so a receiver can resume where it stopped.
 */
export function eventList(types: readonly string[]): ListResource<DomainEvent> {
  return {
    entity: DomainEventSchema,
    from: 'events e',
    alias: 'e',
    catalogue: {
      type: { type: 'enum', values: types, sql: 'e.type' },
      createdAt: { type: 'timestamp', sql: 'e.created_at' },
    },
  };
}
