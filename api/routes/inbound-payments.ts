import { presentInboundPayment, presentInboundPayments } from '../../presenters/inbound-payment';
import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { listQuerySchema, ListQuery } from '../../lists/run-list';
import { idParams } from '../schemas/common';
import { pageOf, ref } from '../schemas/responses';
import { getInboundPayment, listInboundPayments } from '../../services/reported-payments';

/** Decisions 0045, 0076: the customer sees every payment that reached a rail for it. */
export function inboundPaymentRoutes(table: RouteTable, s: ServiceContext): void {
  table.add({
    method: 'get',
    path: '/api/inbound-payments',
    summary: 'List inbound payments: matched, unmatched, returned, credited (filters: status, operationId, createdAt)',
    tag: 'Inbound payments',
    query: listQuerySchema,
    response: { status: 200, schema: pageOf('InboundPayment') },
    async handler(ctx) {
      ctx.body = presentInboundPayments(
        await listInboundPayments(ctx.state.em, ctx.state.query as ListQuery, s.config.cursorSecret),
      );
    },
  });
  table.add({
    method: 'get',
    path: '/api/inbound-payments/:paymentId',
    summary: 'Read one inbound payment',
    tag: 'Inbound payments',
    params: idParams('paymentId'),
    response: { status: 200, schema: ref('InboundPayment') },
    async handler(ctx) {
      ctx.body = presentInboundPayment(await getInboundPayment(ctx.state.em, ctx.params.paymentId));
    },
  });
}
