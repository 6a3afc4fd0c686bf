// How an operation's workflow runs its own database steps (activities/operations/): each one short transaction with
// no outside effect, retried until it commits.
import * as wf from '@temporalio/workflow';
import type { OperationStatusActivities } from '../../activities/operations/status';
import { operationStatusKey } from '../search-attributes';

/** A step scheduled as an activity: a worker that died holding one is noticed after the timeout. */
export const SCHEDULED_STEP: wf.ActivityOptions = {
  startToCloseTimeout: '10s',
  // Infrastructure hiccups retry forever with a capped back-off; business failures are non-retryable.
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
};

/**
 * A step run as a local activity, inside the workflow task (decision 0098), instead of a scheduled activity and a
 * second workflow task. Same at-least-once execution (a worker lost mid-way makes the task time out and the step run
 * again, which the row lock, the state check and the ledger key make harmless), same timeout and retries, the result
 * recorded in history as a marker; only the dispatch through the server is saved.
 */
export const STEP_IN_WORKFLOW_TASK: wf.LocalActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
};

type FailOperation = Pick<OperationStatusActivities, 'failOperation'>;

/** The operation's status as the workflow knows it: the `status` query answers it, the search attribute shows it. */
export class TrackedStatus {
  status = 'REQUESTED';

  constructor(private readonly operationId: string) {}

  /** The status a step answered, shown to operators (OperationStatus in the Temporal UI). */
  track(next: string): void {
    this.status = next;
    wf.upsertSearchAttributes([{ key: operationStatusKey, value: next }]);
  }

  /** Fails the operation through `via` (scheduled or in the workflow task, as the history recorded it). */
  async fail(via: FailOperation, code: string, message: string): Promise<void> {
    this.track(await via.failOperation({ operationId: this.operationId, reason: { code, message, details: {} } }));
  }
}
