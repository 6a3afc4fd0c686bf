import type { RouteTable } from './define';
import type { ServiceContext } from '../services/context';
import { idParams } from '../schemas/common';
import { decisionBody, inboundPaymentBody } from '../schemas/operations';
import { applyHoldDecision, recordHoldDecision } from '../services/operations/signals';
import { getOperation } from '../services/operations/read';
import { sandboxDecision } from './sandbox-decision';
import { getInboundPayment, recordInboundPayment } from '../services/inbound-payments';
import { decideInboundPayment } from '../../payments/inbound-payments';
import { requestScopedId } from '../middleware/idempotency';
import { idempotentAroundEffect } from '../middleware/idempotent-effect';
import { ref } from '../schemas/responses';

export function operationSandboxRoutes(table: RouteTable, s: ServiceContext): void {
  table.add({
    method: 'post',
    path: '/api/sandbox/operations/:operationId/inbound-payment',
    summary: 'Sandbox: simulate a payment received for a deposit',
    tag: 'Sandbox',
    sandbox: true,
    params: idParams('operationId'),
    body: inboundPaymentBody,
    bodyRequired: true,
    response: { status: 200, schema: ref('InboundPayment'), description: 'The payment as recorded and decided' },
    errors: ['NOT_FOUND', 'INVALID_AMOUNT', 'INVALID_AMOUNT_PRECISION', 'INVALID_STATE', 'RAIL_REFERENCE_IN_USE'],
    // Recorded, decided by the deposit's workflow, answered: no transaction stays open while the workflow works.
    ownsIdempotency: true,
    async handler(ctx) {
      await idempotentAroundEffect(
        ctx,
        // Without an endToEndId, the key names it: a retry after a crash finds the record its first attempt made.
        (tx) =>
          recordInboundPayment(tx, ctx.params.operationId, ctx.request.body as never, {
            defaultEndToEndId: `E${requestScopedId(ctx, 'inbound-payment').replace(/-/g, '').slice(0, 31)}`,
          }),
        async (payment) => void (await decideInboundPayment(s, payment)),
        (em, payment) => getInboundPayment(em, payment.id),
      );
    },
  });
  table.add({
    method: 'post',
    path: '/api/sandbox/operations/:operationId/hold-review',
    summary: 'Sandbox: approve or reject a withdrawal held for review',
    tag: 'Sandbox',
    sandbox: true,
    params: idParams('operationId'),
    body: decisionBody,
    bodyRequired: true,
    response: { status: 200, schema: ref('Operation'), description: 'The withdrawal' },
    errors: ['INVALID_STATE'],
    // Recorded, applied by the withdrawal's workflow, answered: no transaction stays open while the workflow works.
    ownsIdempotency: true,
    async handler(ctx) {
      const { operationId } = ctx.params;
      await sandboxDecision(
        ctx,
        (tx, who) => recordHoldDecision(s, tx, operationId, ctx.request.body as never, who),
        (requestEm, decisionId) => applyHoldDecision(s, requestEm, operationId, decisionId),
        (answerEm) => getOperation(answerEm, operationId),
      );
    },
  });
}
