import { WorkflowNotFoundError } from '@temporalio/client';
import type { Em } from '../db/orm';
import { closeStoppedDelivery, lockDeliveryMark, releaseDeliveryMark } from '../db/repositories/webhook-recovery';
import { webhookDeliveryWorkflowId } from '../workflows/ids';
import { attemptMayBeOpenSeconds } from './attempt-bound';
import type { WebhookContext } from './context';

// Temporal is asked while the delivery's row is locked, the transaction idle meanwhile: a Temporal that does not
// answer is a 503 well before Postgres ends an idle transaction (DB_IDLE_IN_TRANSACTION_TIMEOUT_MS, 5 s).
const DESCRIBE_DEADLINE_MS = 2_000;

/** Whether the workflow runs now; a workflow Temporal does not know (never started, or purged) does not. */
async function running(s: WebhookContext, workflowId: string): Promise<boolean> {
  const describe = () => s.temporal.workflow.getHandle(workflowId).describe();
  return s.temporal.withDeadline(Date.now() + DESCRIBE_DEADLINE_MS, describe).then(
    (d) => d.status.name === 'RUNNING',
    (err: unknown) => (err instanceof WorkflowNotFoundError ? false : Promise.reject(err)),
  );
}

/**
 * A delivery marked in progress (`next_attempt`) whose workflows have all ended, terminated by hand or failed, is
 * stranded: nothing will ever clear its marker. So is one still PENDING (its first attempt never ended) whose own
 * workflow ended: it would never be listed nor recovered. In the caller's transaction, under the delivery's row lock,
 * this takes the marker back, or closes the PENDING one FAILED `DELIVERY_STOPPED` (decision 0260), when no start of
 * it is queued, no attempt of it may still be in flight, and neither its own workflow nor the one recover or
 * redelivery last queued for it is running; then the caller may queue an attempt. True when the delivery is settled
 * with no marker now. Workflows never run again once ended (their ids are not reused: a queued attempt's has a
 * random part), so one seen ended cannot send beside the attempt queued after (decision 0259).
 */
export async function releaseStrandedDelivery(s: WebhookContext, tx: Em, executionLogId: string): Promise<boolean> {
  // A terminated workflow's attempt is not stopped at once either.
  const openWithin = attemptMayBeOpenSeconds(s.config);
  const mark = await lockDeliveryMark(tx, executionLogId, openWithin);
  if (!mark) return false;
  const pending = mark.status === 'PENDING';
  if (!pending && mark.nextAttempt === null) return true;
  // The outbox first: a start not yet made has no workflow to ask about, and once made its row is gone.
  if (mark.startQueued || mark.attemptOpen) return false;
  const workflows = [webhookDeliveryWorkflowId(executionLogId), mark.queuedWorkflowId];
  for (const id of workflows) if (id && (await running(s, id))) return false;
  if (pending) await closeStoppedDelivery(tx, executionLogId);
  if (mark.nextAttempt !== null) await releaseDeliveryMark(tx, executionLogId, mark.nextAttempt);
  return true;
}
