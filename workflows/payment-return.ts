// A return of an inbound payment through its provider (docs/decisions/0080: `devolucao`): started with the
// RETURNING record (an outbox row of the operator's transaction), it sends the return under our id on the rails'
// task queue and reads its status until the PSP answers DEVOLVIDO (RETURNED) or NAO_REALIZADO (UNMATCHED again,
// with the reason). A notice or reconciliation that brings the answer first settles it; this one then finds it
// settled and changes nothing.
import * as wf from '@temporalio/workflow';
import type { Activities } from '../activities';
import { railActivities, railRejection, statusReadPauses } from './rail-calls';

const acts = wf.proxyActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
});

export async function paymentReturnWorkflow(input: { paymentId: string; returnId: string }): Promise<string> {
  const { paymentId, returnId } = input;
  const order = await acts.returnOrder({ paymentId, returnId });
  if (order.settled) return order.settled;
  const rails = railActivities(order.taskQueue);
  let state;
  try {
    state = await rails.pixReturnPayment(order.request);
  } catch (err) {
    const refused = railRejection(err);
    if (!refused) throw err;
    // Refused outright (no such Pix, more than it holds): nothing was sent back.
    return acts.settlePaymentReturn({ paymentId, returnId, status: 'FAILED', reason: refused.message });
  }
  const pause = statusReadPauses();
  while (state.status === 'PENDING') {
    await pause();
    // Settled meanwhile by a notice or reconciliation: nothing left to wait for.
    const now = await acts.returnOrder({ paymentId, returnId });
    if (now.settled) return now.settled;
    state = await rails.pixReturnStatus({ endToEndId: order.request.endToEndId, returnId });
  }
  return acts.settlePaymentReturn({
    paymentId,
    returnId,
    status: state.status,
    ...(state.reason ? { reason: state.reason } : {}),
    ...(state.endToEndId ? { endToEndId: state.endToEndId } : {}),
  });
}
