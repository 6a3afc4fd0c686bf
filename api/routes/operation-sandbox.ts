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
import { payThroughSimulator, simulatedCharge, simulatedPayment, simulatedPix } from '../../services/sandbox-pix';
import type { InboundPaymentReport } from '../../services/reported-payments';
import {
  sendThroughSimulatedBank,
  simulatedTed,
  simulatedTedPayment,
  tedDepositWithBank,
} from '../../services/sandbox-ted';
import { payBoletoThroughSimulator, simulatedBoleto, simulatedBoletoPayment } from '../../services/sandbox-boleto';

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
    ],
    // Recorded, decided by the deposit's workflow, answered: no transaction stays open while the workflow works.
    ownsIdempotency: true,
    async handler(ctx) {
      const { operationId } = ctx.params;
      const body = ctx.request.body as InboundPaymentReport;
      // Without an endToEndId, the key names it: a retry after a crash finds the record its first attempt made.
      const defaultEndToEndId = sandboxEndToEndId(requestScopedId(ctx, 'inbound-payment'));
      // A PIX deposit with a charge is paid by the simulated PSP, and recorded from its notice, as in production.
      const txid = await simulatedCharge(s, ctx.state.em, operationId, body);
      if (txid) {
        const customerId: string = ctx.state.customerId;
        return idempotentAroundEffect(
          ctx,
          async () => simulatedPix(txid, body, defaultEndToEndId),
          (pix) => payThroughSimulator(s, customerId, pix),
          async (em, pix) => presentInboundPayment(await simulatedPayment(em, customerId, pix.endToEndId)),
        );
      }
      // A TED deposit of a deployment that reads TEDs from a bank: the simulated bank receives it, the poll records it.
      const owner = await tedDepositWithBank(s, ctx.state.em, operationId, body);
      if (owner !== undefined) {
        const customerId: string = ctx.state.customerId;
        return idempotentAroundEffect(
          ctx,
          async () => simulatedTed(body, owner, requestScopedId(ctx, 'inbound-payment')),
          (sent) => sendThroughSimulatedBank(s, customerId, sent),
          async (em, sent) => presentInboundPayment(await simulatedTedPayment(em, sent.transactionId)),
        );
      }
      // A BOLETO deposit registered at the (simulated) bank is paid there, and recorded from the bank's notice.
      const boleto = await simulatedBoleto(s, ctx.state.em, operationId, body);
      if (boleto) {
        const customerId: string = ctx.state.customerId;
        return idempotentAroundEffect(
          ctx,
          async () => boleto,
          (b) => payBoletoThroughSimulator(s, customerId, b),
          async (em, b) => presentInboundPayment(await simulatedBoletoPayment(em, customerId, b.codigoSolicitacao)),
        );
      }
      await idempotentAroundEffect(
        ctx,
        (tx) =>
          recordInboundPayment(tx, operationId, body, {
            defaultEndToEndId,
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
