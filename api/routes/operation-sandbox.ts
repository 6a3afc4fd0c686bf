import type { RouteTable } from './define';
import type { ServiceContext } from '../services/context';
import { idParams } from '../schemas/common';
import { decisionBody, inboundPaymentBody } from '../schemas/operations';
import { decideHold, recordInboundPayment } from '../services/operations/signals';
import { requireSandbox } from './sandbox';
import { requestScopedId } from '../middleware/idempotency';
import { ref } from '../schemas/responses';

export function operationSandboxRoutes(table: RouteTable, s: ServiceContext): void {
  table.add({
    method: 'post',
    path: '/api/sandbox/operations/:operationId/inbound-payment',
    summary: 'Sandbox: simulate a payment received for a deposit',
    tag: 'Sandbox',
    params: idParams('operationId'),
    body: inboundPaymentBody,
    bodyRequired: true,
    response: { status: 200, schema: ref('Operation'), description: 'The deposit' },
    errors: ['INVALID_AMOUNT', 'INVALID_AMOUNT_PRECISION', 'INVALID_STATE', 'SANDBOX_DISABLED'],
    async handler(ctx) {
      requireSandbox(s);
      // Named by the idempotency key: a retry after a crash finds the payment its first attempt committed.
      ctx.body = await recordInboundPayment(s, ctx.state.em, ctx.params.operationId, ctx.request.body as never, { paymentId: requestScopedId(ctx, 'inbound-payment') });
    },
  });
  table.add({
    method: 'post',
    path: '/api/sandbox/operations/:operationId/hold-review',
    summary: 'Sandbox: approve or reject a withdrawal held for review',
    tag: 'Sandbox',
    params: idParams('operationId'),
    body: decisionBody,
    bodyRequired: true,
    response: { status: 200, schema: ref('Operation'), description: 'The withdrawal' },
    errors: ['INVALID_STATE', 'SANDBOX_DISABLED'],
    async handler(ctx) {
      requireSandbox(s);
      ctx.body = await decideHold(s, ctx.state.em, ctx.params.operationId, ctx.request.body as never);
    },
  });
}
