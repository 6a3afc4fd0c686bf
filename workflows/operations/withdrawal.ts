// A withdrawal's life in its operation's workflow: an operator's hold decision when it needs review, PROCESSING, the
// payout through its rail (workflows/operations/payout.ts), then COMPLETED or FAILED with the reserved funds back.
import * as wf from '@temporalio/workflow';
import type { OperationStatusActivities } from '../../activities/operations/status';
import type { WithdrawalActivities } from '../../activities/operations/withdrawal';
import type { OperationWorkflowInput, PendingPayout } from './contract';
import { SCHEDULED_STEP, STEP_IN_WORKFLOW_TASK, type TrackedStatus } from './database-steps';
import { takeHoldDecisions } from './hold-decisions';
import { payThroughRails, type PayoutOutcome } from './payout';
import { FIRST_STATUS_READ_MS } from '../rail-calls';

/** What a withdrawal's workflow runs: its status steps and its payout's order and record (provider calls apart). */
type WithdrawalSteps = OperationStatusActivities & WithdrawalActivities;

const acts = wf.proxyActivities<WithdrawalSteps>(SCHEDULED_STEP);
const inWorkflowTask = wf.proxyLocalActivities<WithdrawalSteps>(STEP_IN_WORKFLOW_TASK);

// Withdrawals pay out through the PSP with its calls on the rails' task queue (before: one activity on the main
// queue did it all).
const PAYOUT_THROUGH_RAILS = 'payout-through-rails';
// A withdrawal's own database steps (its status, the payout order, the payout's record, its settlement or failure)
// run as local activities in the workflow task, as a transfer's settlement does; only the PSP's calls are
// dispatched, on the rails' queue. Each step is one short transaction with no outside effect, safe to run again (a
// withdrawal took about a quarter less CPU and Temporal's share nearly halved: decision 0098).
const WITHDRAWAL_STEPS_IN_TASK = 'withdrawal-database-steps-in-workflow-task';

// A run that finds its withdrawal already past ON_HOLD ends there: it is a run started again (decision 0315).
const RERUN_STOPS_PAST_REVIEW = 'withdrawal-rerun-stops-past-review';
// One that finds it PROCESSING (the run that paid was closed by hand) follows the payout its first run ordered: never
// a first send of it, whose refusal would be final while the first PUT may pay (decision 0327).
const RERUN_FOLLOWS_PAYOUT = 'withdrawal-rerun-follows-payout';

// Rail-neutral: a WALLET's or a TED's refusal is as final as a PIX's (and a running history's old words are only an
// activity's input, which a replay does not compare). `told`: why, in the customer's words, when the rail said
// (decision 0319); never the provider's own.
const payoutRejected = (told?: string) => ({
  code: 'PAYOUT_REJECTED',
  message: `the payout was rejected: ${told ? `${told}; ` : ''}nothing was paid and the hold is released`,
});

/** A withdrawal, from REQUESTED to COMPLETED or FAILED. `rowsOnly`: it takes hold decisions only as recorded rows. */
export async function withdrawalOperation(
  input: OperationWorkflowInput,
  op: TrackedStatus,
  rowsOnly: boolean,
): Promise<string> {
  const { operationId } = input;
  const decision = takeHoldDecisions(rowsOnly);
  // Its own database steps inside the workflow task, as a transfer settles; histories recorded before scheduled
  // them as activities, and replay so.
  const withdrawalSteps = wf.patched(WITHDRAWAL_STEPS_IN_TASK) ? inWorkflowTask : acts;
  const continueAsNew = async (pendingPayout: PendingPayout) => {
    // Decisions being applied finish first: a continued run does not see this one's handlers.
    await wf.condition(wf.allHandlersFinished);
    // The same workflow type (operationWorkflow) with the same input, but where the payout is.
    return wf.makeContinueAsNewFunc<(input: OperationWorkflowInput) => Promise<string>>({
      typedSearchAttributes: wf.workflowInfo().typedSearchAttributes,
    })({ ...input, pendingPayout });
  };
  let resumed = input.pendingPayout;
  if (resumed) {
    // A run continued as new: reviewed, PROCESSING and sent before; only the payout's answer is left.
    op.status = 'PROCESSING';
  } else {
    if (input.requiresReview) {
      op.track(await withdrawalSteps.setOperationStatus({ operationId, status: 'ON_HOLD' }));
      // A run started again by a hold decision after the first was closed by hand (decision 0315) finds the
      // withdrawal ON_HOLD; one that finds it past its review (a run started twice) must not decide or pay again.
      if (op.status === 'PROCESSING' && wf.patched(RERUN_FOLLOWS_PAYOUT)) {
        resumed = { waitMs: FIRST_STATUS_READ_MS };
      } else if (op.status !== 'ON_HOLD' && wf.patched(RERUN_STOPS_PAST_REVIEW)) {
        return op.status;
      } else {
        await wf.condition(() => decision() !== undefined);
        const taken = decision()!;
        if (taken.decision === 'REJECT') {
          await op.fail(withdrawalSteps, 'HOLD_REJECTED', taken.reason ?? 'the withdrawal was rejected in review');
          return op.status;
        }
      }
    }
    if (!resumed) op.track(await withdrawalSteps.setOperationStatus({ operationId, status: 'PROCESSING' }));
  }
  const payout: PayoutOutcome =
    resumed || wf.patched(PAYOUT_THROUGH_RAILS)
      ? await payThroughRails(operationId, withdrawalSteps, continueAsNew, resumed)
      : await acts.executePayout({ operationId });
  if (!payout.ok) {
    const failure = 'code' in payout ? payout : payoutRejected(payout.told);
    await op.fail(withdrawalSteps, failure.code, failure.message);
    return op.status;
  }
  op.track(await withdrawalSteps.completeOperation({ operationId }));
  return op.status;
}
