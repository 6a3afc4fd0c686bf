// A withdrawal's payout step: the payout sent through its rail's provider, on the rails' task queue, read until the
// provider's final answer, and that answer recorded on the operation.
import * as wf from '@temporalio/workflow';
import type { WithdrawalActivities } from '../../activities/operations/withdrawal';
import type { PayoutState } from '../../rails/rail';
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
} from '../rail-calls';
import type { PendingPayout } from './contract';

// Withdrawals started from here on end their payout only on the PSP's final answer (decision 0108): its status reads
// go through railFollowPayout (pixFollowPayout before decision 0118; a payout the PSP does not show is sent again), a
// worker without a PSP fails the withdrawal RAIL_NOT_CONFIGURED instead of the workflow, and the reads continue as
// new once the history is long.
const PAYOUT_FINAL_ANSWERS = 'payout-ends-on-final-answer';

/**
 * A payout's end. `told`: why a refused payout was refused, in the customer's words, when its rail said (decision
 * 0319): taken from the rail's answer in this history, so a history recorded before replays to the same commands.
 */
export type PayoutOutcome =
  { ok: boolean; endToEnd: string; told?: string } | { ok: false; code: string; message: string };

/** The withdrawal's database steps the payout takes, scheduled or in the workflow task as the history recorded. */
type PayoutSteps = wf.ActivityInterfaceFor<Pick<WithdrawalActivities, 'payoutOrder' | 'recordPayout'>>;

/**
 * Sends the payout under its idEnvio and reads its status until the PSP answers REALIZADO or NAO_REALIZADO. Only
 * a final answer is recorded: while it is pending (or the PSP cannot be reached) the operation stays PROCESSING,
 * because money may still leave. A PSP that refuses the payout outright sent nothing: FAILED. A worker with no PSP
 * sent nothing either: FAILED RAIL_NOT_CONFIGURED, with no rail transaction. While pending, the workflow continues
 * as new once its history is long (`continueAsNew`, which does not return); `resumed` is where the last run was.
 */
export async function payThroughRails(
  operationId: string,
  steps: PayoutSteps,
  continueAsNew: (pending: PendingPayout) => Promise<never>,
  resumed?: PendingPayout,
): Promise<PayoutOutcome> {
  const order = await steps.payoutOrder({ operationId });
  if (order.recorded) return order.recorded;
  const rails = railCalls(order.taskQueue, order.rail);
  if (!resumed && !wf.patched(PAYOUT_FINAL_ANSWERS)) {
    // Withdrawals started before: the calls they made, but continued as new (onto the code below) when long.
    let state;
    try {
      state = await rails.sendPayout(order.request);
    } catch (err) {
      const refused = railRejection(err);
      if (!refused) throw err;
      return withTold(await steps.recordPayout({ operationId, status: 'FAILED', reason: refused.message }), refused);
    }
    const pause = statusReadPauses();
    while (state.status === 'PENDING') {
      if (timeToContinueAsNew()) await continueAsNew({ waitMs: MAX_STATUS_READ_MS });
      await pause();
      state = await rails.payoutStatus({ payoutId: order.request.payoutId });
    }
    const recorded = await steps.recordPayout({
      operationId,
      status: state.status,
      endToEnd: state.endToEndId,
      reason: state.reason,
    });
    return withAnswer(recorded, state);
  }
  let state: PayoutState = { payoutId: order.request.payoutId, status: 'PENDING' };
  try {
    if (!resumed) state = await rails.sendPayout(order.request);
    let wait = resumed?.waitMs;
    while (state.status === 'PENDING') {
      if (timeToContinueAsNew()) await continueAsNew({ waitMs: wait ?? FIRST_STATUS_READ_MS });
      wait = await statusReadPause(wait);
      state = await rails.followPayout(order.request);
    }
  } catch (err) {
    const refused = railRejection(err);
    if (refused) {
      return withTold(await steps.recordPayout({ operationId, status: 'FAILED', reason: refused.message }), refused);
    }
    const unconfigured = railNotConfigured(err);
    if (!unconfigured) throw err;
    return { ok: false, code: 'RAIL_NOT_CONFIGURED', message: unconfigured.message };
  }
  const recorded = await steps.recordPayout({
    operationId,
    status: state.status,
    endToEnd: state.endToEndId,
    reason: state.reason,
  });
  return withAnswer(recorded, state);
}

/** The provider's final answer as recorded; a FAILED one with what the customer may be told of it (0319). */
function withAnswer(recorded: { ok: boolean; endToEnd: string }, state: PayoutState): PayoutOutcome {
  return !recorded.ok && state.forCustomer ? { ...recorded, told: state.forCustomer } : recorded;
}

/** A refusal's record, with what the customer may be told of it (decision 0278's details of RAIL_REJECTED). */
function withTold(recorded: { ok: boolean; endToEnd: string }, refused: wf.ApplicationFailure): PayoutOutcome {
  const told = refusalForCustomer(refused);
  return !recorded.ok && told ? { ...recorded, told } : recorded;
}
