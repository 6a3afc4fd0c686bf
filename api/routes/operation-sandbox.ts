import { presentInboundPayment } from '../../presenters/inbound-payment';
import { presentOperation } from '../../presenters/operation';
import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { idParams } from '../schemas/common';
import { decisionBody, inboundPaymentBody } from '../schemas/operations';
import { applyHoldDecision, recordHoldDecision } from '../../services/operations/signals';
import { getOperation } from '../../services/operations/read';
import { sandboxDecision } from './sandbox-decision';
import { getInboundPayment, recordInboundPayment } from '../../services/reported-payments';
import { decideInboundPayment } from '../../payments/record-and-decide';
import { sandboxEndToEndId } from '../../domain/end-to-end-ids';
import { requestScopedId } from '../middleware/idempotency';
import { idempotentAroundEffect } from '../middleware/idempotent-effect';
import { ref } from '../schemas/responses';
import type { InboundPaymentReport } from '../../services/reported-payments';
import { payInSandbox, sandboxDepositPayment, sandboxPaymentRecord } from '../../services/sandbox-recorded';
import type { SandboxPaid } from '../../rails/rail';

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
    errors: [
      'NOT_FOUND',
      'INVALID_AMOUNT',
      'INVALID_AMOUNT_PRECISION',
      'INVALID_STATE',
      'RAIL_REFERENCE_IN_USE',
      'RAIL_REJECTED',
      'RAIL_ASSET_MISMATCH',
    ],
    // Recorded, decided by the deposit's workflow, answered: no transaction stays open while the workflow works.
    ownsIdempotency: true,
    async handler(ctx) {
      const { operationId } = ctx.params;
      const body = ctx.request.body as InboundPaymentReport;
      // The key names the payment: a retry after a crash pays, or finds the record, its first attempt made; the key
      // used again after its 24 h names another (requestScopedId).
      const paymentId = await requestScopedId(ctx, 'inbound-payment');
      // A deposit whose rail's connector has a sandbox payer is paid at the (simulated) provider or on the local
      // chain, and recorded the way production learns of it; the others are recorded here, as an operator would.
      const sandbox = await sandboxDepositPayment(s, ctx.state.em, operationId, body, paymentId);
      if (sandbox) {
        const customerId: string = ctx.state.customerId;
        let paid: SandboxPaid | undefined;
        return idempotentAroundEffect(
          ctx,
          async () => sandbox.checked(),
          async (payment) => void (paid = await payInSandbox(s, customerId, sandbox, payment)),
          async (em) => presentInboundPayment(await sandboxPaymentRecord(em, customerId, sandbox.rail, paid!)),
        );
      }
      await idempotentAroundEffect(
        ctx,
        (tx) =>
          recordInboundPayment(tx, operationId, body, {
            defaultEndToEndId: sandboxEndToEndId(paymentId),
            via: { taskQueue: s.config.taskQueue, actor: `customer:${ctx.state.customerId}` },
          }),
        async (payment) => void (await decideInboundPayment(s, payment, undefined, `customer:${ctx.state.customerId}`)),
        async (em, payment) => presentInboundPayment(await getInboundPayment(em, payment.id)),
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
        async (answerEm) => presentOperation(await getOperation(answerEm, operationId)),
      );
    },
  });
}
