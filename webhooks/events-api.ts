import type { Em } from '../db/orm';
import { DomainEvent, DomainEventSchema } from '../db/entities';
import { EVENT_TYPES } from './event-types';
import { notFound } from '../api/errors';
import type { FieldCatalogue } from '../api/lists/filter-fields';
import { ListQuery, runList } from '../api/lists/run-list';

/**
 * Events read back (docs/decisions.md, "Webhook recovery"): `payload` is the body every delivery of the event
 * carried, key for key (the column is `json`, which keeps the text as written). Tenant: the EntityManager's
 * customer scope (the entity's tenant filter, and runList's customer condition).
 */
export const presentEvent = (e: DomainEvent) => ({
  id: e.id,
  type: e.type,
  createdAt: e.createdAt.toISOString(),
  payload: e.payload,
});

// Filters of the events list: the type, and the recording time (to resume where a receiver stopped).
const CATALOGUE: FieldCatalogue = {
  type: { type: 'enum', values: EVENT_TYPES, sql: 'e.type' },
  createdAt: { type: 'timestamp', sql: 'e.created_at' },
};

export async function listEvents(em: Em, query: ListQuery, cursorSecret: string) {
  const resource = { entity: DomainEventSchema, from: 'events e', alias: 'e', catalogue: CATALOGUE };
  const page = await runList(em, resource, query, cursorSecret);
  return { data: page.data.map(presentEvent), meta: page.meta };
}

export async function getEvent(em: Em, id: string) {
  const event = await em.findOne(DomainEventSchema, { id }, { refresh: true });
  if (!event) throw notFound('event');
  return presentEvent(event);
}
