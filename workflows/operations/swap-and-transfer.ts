// A swap's or a transfer's life in its operation's workflow: settled in one short transaction with no outside effect,
// or failed with the reserved funds given back.
import * as wf from '@temporalio/workflow';
import type { OperationStatusActivities } from '../../activities/operations/status';
import type { OperationWorkflowInput } from './contract';
import { SCHEDULED_STEP, STEP_IN_WORKFLOW_TASK, type TrackedStatus } from './database-steps';
import { takeHoldDecisions } from './hold-decisions';

type SettlementSteps = Pick<OperationStatusActivities, 'completeOperation' | 'failOperation'>;

const acts = wf.proxyActivities<SettlementSteps>(SCHEDULED_STEP);
// The settlement runs as a local activity, inside the workflow task that starts the workflow (decision 0098).
const inWorkflowTask = wf.proxyLocalActivities<SettlementSteps>(STEP_IN_WORKFLOW_TASK);

/**
 * A swap or a transfer, from REQUESTED to COMPLETED or FAILED. It takes no decision, but sets the handlers every
 * operation that is not a deposit sets (`rowsOnly`: as the histories recorded them).
 */
export async function swapOrTransferOperation(
  input: OperationWorkflowInput,
  op: TrackedStatus,
  rowsOnly: boolean,
): Promise<string> {
  takeHoldDecisions(rowsOnly);
  try {
    op.track(await inWorkflowTask.completeOperation({ operationId: input.operationId }));
  } catch (err) {
    // Settlement refused for a business reason: give the reserved funds back.
    const cause = businessFailure(err);
    if (!cause) throw err;
    await op.fail(acts, cause.type ?? 'SETTLEMENT_FAILED', cause.message);
  }
  return op.status;
}

/**
 * The non-retryable failure a step ended with: a scheduled activity's comes wrapped in an ActivityFailure, a local
 * activity's reaches the workflow as the ApplicationFailure itself. Anything else (a bug, a cancellation) is not
 * a business answer: undefined.
 */
function businessFailure(err: unknown): wf.ApplicationFailure | undefined {
  if (err instanceof wf.ActivityFailure) return err.cause instanceof wf.ApplicationFailure ? err.cause : undefined;
  return err instanceof wf.ApplicationFailure ? err : undefined;
}
