import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { listQuerySchema } from '../../lists/run-list';
import { idParams } from '../schemas/common';
import { eventListResponse, eventResponse } from '../schemas/webhook-events';
import { getEvent, listEvents } from '../../webhooks/events-api';

export function eventRoutes(table: RouteTable, s: ServiceContext): void {
  const tag = 'Events';

  table.add({
    method: 'get',
    path: '/api/events',
    summary: 'List the events of the last EVENT_RETENTION_DAYS (30); filters on type and createdAt',
    tag,
    query: listQuerySchema,
    response: { status: 200, schema: eventListResponse },
    async handler(ctx) {
      ctx.body = await listEvents(ctx.state.em, ctx.state.query, s.config.cursorSecret);
    },
  });

  table.add({
    method: 'get',
    path: '/api/events/:eventId',
    summary: 'Retrieve an event: its payload is the body its webhook deliveries carry',
    tag,
    params: idParams('eventId'),
    response: { status: 200, schema: eventResponse },
    async handler(ctx) {
      ctx.body = await getEvent(ctx.state.em, ctx.params.eventId);
    },
  });
}
