import type { Em } from '../db/orm';
import type { DomainEvent } from '../db/entities';
import { eventList, findEvent } from '../db/repositories/event-reads';
import { EVENT_TYPES } from './event-types';
import { notFound } from '../domain/errors';
import { ListQuery, runList } from '../lists/run-list';

/**
 * Events read back (decision 0044): `payload` is the body every delivery of the event
 * carried, key for key (the column is `json`, which keeps the text as written). Tenant: the EntityManager's
 * customer scope, applied by db/repositories/event-reads.ts.
 */
export const presentEvent = (e: DomainEvent) => ({
  id: e.id,
  type: e.type,
  createdAt: e.createdAt.toISOString(),
  payload: e.payload,
});

// Built once: the list's filters take the catalogue's event types.
const EVENT_LIST = eventList(EVENT_TYPES);

export async function listEvents(em: Em, query: ListQuery, cursorSecret: string) {
  const page = await runList(em, EVENT_LIST, query, cursorSecret);
  return { data: page.data.map(presentEvent), meta: page.meta };
}

export async function getEvent(em: Em, id: string) {
  const event = await findEvent(em, id);
  if (!event) throw notFound('event');
  return presentEvent(event);
}
