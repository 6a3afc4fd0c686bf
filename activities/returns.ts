import { ApplicationFailure } from '@temporalio/activity';
import { systemEm } from '../db/orm';
import type { InboundPaymentStatus } from '../db/entities';
import { findPayment } from '../db/repositories/inbound-payments';
import { formatAmount } from '../domain/money';
import type { AssetCode } from '../domain/assets';
import { settleReturn, type ReturnOutcome } from '../payments/returns';
import type { ReturnRequest } from '../rails/rail';
import type { ActivityDeps } from './deps';

/** What a return's workflow sends, and on which queue; or the state it already reached (nothing left to send). */
export type ReturnOrder =
  | { settled: InboundPaymentStatus; taskQueue?: undefined; request?: undefined }
  | {
      settled?: undefined;
      taskQueue: string;
      /** The payment's rail; absent from orders recorded before decision 0118 (PIX's then). */
      rail?: string;
      request: ReturnRequest;
    };

/**
 * The main queue's side of a return through a provider (workflows/payment-return.ts): read what to send from the
 * RETURNING record, and apply the provider's final answer. Both are idempotent: a record no longer RETURNING under
 * this return id has nothing to send, and its outcome is applied once (payments/returns.ts).
 */
/** A return's steps on the main queue (workflows/payment-return.ts). */
export type ReturnActivities = ReturnType<typeof createReturnActivities>;

export function createReturnActivities(deps: ActivityDeps) {
  return {
    async returnOrder(input: { paymentId: string; returnId: string }): Promise<ReturnOrder> {
      const payment = await findPayment(systemEm(deps.orm), input.paymentId);
      if (!payment) {
        throw ApplicationFailure.nonRetryable(`inbound payment ${input.paymentId} not found`, 'PAYMENT_NOT_FOUND');
      }
      if (payment.status !== 'RETURNING' || payment.returnId !== input.returnId) return { settled: payment.status };
      return {
        taskQueue: deps.config.railsTaskQueue,
        rail: payment.rail,
        request: {
          endToEndId: payment.endToEndId,
          returnId: input.returnId,
          // The whole payment goes back (a remainder's part only: what it holds).
          amount: formatAmount(payment.amount, payment.asset as AssetCode),
          ...(payment.returnReason ? { description: payment.returnReason } : {}),
        },
      };
    },

    async settlePaymentReturn(
      input: { paymentId: string; returnId: string } & ReturnOutcome,
    ): Promise<InboundPaymentStatus> {
      const { paymentId, returnId, ...outcome } = input;
      return settleReturn(deps.orm, paymentId, returnId, outcome);
    },
  };
}
