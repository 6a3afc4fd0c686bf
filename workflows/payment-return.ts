// A return of an inbound payment through its provider (docs/decisions/0080: `devolucao`): started with the
// RETURNING record (an outbox row of the operator's transaction), it sends the return under our id on the rails'
// task queue and reads its status until the PSP answers DEVOLVIDO (RETURNED) or NAO_REALIZADO (UNMATCHED again,
// with the reason). A notice or reconciliation that brings the answer first settles it; this one then finds it
// settled and changes nothing.
import * as wf from '@temporalio/workflow';
import type { ReturnActivities } from '../activities/returns';
import type { ReturnState } from '../rails/rail';
import {
  FIRST_STATUS_READ_MS,
  MAX_STATUS_READ_MS,
  railCalls,
  railNotConfigured,
  railRejection,
  refusalForCustomer,
  statusReadPause,
  statusReadPauses,
  timeToContinueAsNew,
} from './rail-calls';

const acts = wf.proxyActivities<ReturnActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
});

export interface PaymentReturnInput {
  paymentId: string;
  returnId: string;
  /** A return continued as new while pending at the PSP (decision 0109): asked before, read again after `waitMs`. */
  pending?: { waitMs: number };
}

// Returns started from here on end only on the PSP's final answer (decision 0108): their reads go through
// railFollowReturn (pixFollowReturn before decision 0118; a return the PSP does not show is asked again), and a
// worker without a PSP settles the return FAILED (nothing was sent) instead of failing the workflow.
const RETURN_FINAL_ANSWERS = 'return-ends-on-final-answer';

export async function paymentReturnWorkflow(input: PaymentReturnInput): Promise<string> {
  const { paymentId, returnId } = input;
  const order = await acts.returnOrder({ paymentId, returnId });
  if (order.settled) return order.settled;
  const rails = railCalls(order.taskQueue, order.rail);
  const continueAsNew = (waitMs: number) =>
    wf.makeContinueAsNewFunc<typeof paymentReturnWorkflow>()({ paymentId, returnId, pending: { waitMs } });
  const refusedWith = (reason: string) => acts.settlePaymentReturn({ paymentId, returnId, status: 'FAILED', reason });
  if (!input.pending && !wf.patched(RETURN_FINAL_ANSWERS)) {
    // Returns started before: the calls they made, but continued as new (onto the code below) when long.
    let sent;
    try {
      sent = await rails.returnPayment(order.request);
    } catch (err) {
      const refused = railRejection(err);
      if (!refused) throw err;
      // Refused outright (no such Pix, more than it holds): nothing was sent back.
      return refusedWith(returnFailure(refused, paymentId, returnId));
    }
    const pause = statusReadPauses();
    while (sent.status === 'PENDING') {
      if (timeToContinueAsNew()) await continueAsNew(MAX_STATUS_READ_MS);
      await pause();
      // Settled meanwhile by a notice or reconciliation: nothing left to wait for.
      const now = await acts.returnOrder({ paymentId, returnId });
      if (now.settled) return now.settled;
      sent = await rails.returnStatus({ endToEndId: order.request.endToEndId, returnId });
    }
    return settle(paymentId, returnId, sent);
  }
  let state: ReturnState = { returnId, amount: order.request.amount, status: 'PENDING' };
  try {
    if (!input.pending) state = await rails.returnPayment(order.request);
    let wait = input.pending?.waitMs;
    while (state.status === 'PENDING') {
      if (timeToContinueAsNew()) await continueAsNew(wait ?? FIRST_STATUS_READ_MS);
      wait = await statusReadPause(wait);
      // Settled meanwhile by a notice or reconciliation: nothing left to wait for.
      const now = await acts.returnOrder({ paymentId, returnId });
      if (now.settled) return now.settled;
      state = await rails.followReturn(order.request);
    }
  } catch (err) {
    // Refused with nothing under our id (no such Pix, more than it holds), or no PSP on the worker that took the
    // first call: nothing was sent back.
    const rejected = railRejection(err);
    if (rejected) return refusedWith(returnFailure(rejected, paymentId, returnId));
    const notConfigured = railNotConfigured(err);
    if (!notConfigured) throw err;
    return refusedWith(notConfigured.message);
  }
  return settle(paymentId, returnId, state);
}

/**
 * The failure a refused return shows on its payment (`returned.failure`): what the rail says the customer may be told
 * (PIX: that the PSP refused it and which of the return's shown fields, never its words, decision 0278), or the
 * refusal's message for a rail whose refusals are Cambio's own words (CRYPTO's checks). The provider's words are
 * the operator's: this log line and the activity's failure in the workflow's history.
 */
function returnFailure(refused: wf.ApplicationFailure, paymentId: string, returnId: string): string {
  wf.log.warn('the provider refused the return', { paymentId, returnId, refusal: refused.message });
  return refusalForCustomer(refused) ?? refused.message;
}

/** The PSP's final answer, applied to the payment (RETURNED, or UNMATCHED again with the reason). */
function settle(paymentId: string, returnId: string, state: ReturnState): Promise<string> {
  return acts.settlePaymentReturn({
    paymentId,
    returnId,
    status: state.status as 'RETURNED' | 'FAILED',
    ...(state.reason ? { reason: state.reason } : {}),
    ...(state.endToEndId ? { endToEndId: state.endToEndId } : {}),
  });
}
