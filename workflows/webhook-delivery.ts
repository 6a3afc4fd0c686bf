import * as wf from '@temporalio/workflow';
import type { RetryPolicy } from '@temporalio/common';
import type { Activities } from '../activities';

export interface WebhookDeliveryInput {
  executionLogId: string;
  /** Where the attempt count starts: 1 for a new delivery, the next number for a manual redelivery. */
  firstAttempt?: number;
  /** A manual redelivery: one attempt, whatever allowRetry says. */
  redelivery?: boolean;
}

// One attempt is one POST bounded by WEBHOOK_TIMEOUT_SECONDS (10 s) plus two short database writes. A failure
// of the attempt itself (database down, worker killed) is retried with backoff; the attempt number keys the
// log write, so a retry never counts an attempt twice.
const retry: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', nonRetryableErrorTypes: ['NOT_FOUND'] };

// The attempt runs as a local activity, inside the workflow task: a delivery is then one workflow task and no
// activity dispatch through the server (schedule, poll, start, complete, a second workflow task), which was most
// of what a delivery cost Temporal. A worker that dies mid-attempt lets that workflow task time out (10 s), and
// another worker runs the attempt again (same message id and body). A POST longer than the workflow task timeout
// is fine: the SDK keeps the task alive while a local activity runs.
const local = wf.proxyLocalActivities<Activities>({ startToCloseTimeout: '2m', retry });

// Deliveries started before the change run the attempt as an ordinary activity, heartbeating during the POST so
// a dead worker is noticed after 5 s; their histories replay only on this path.
const dispatched = wf.proxyActivities<Activities>({ startToCloseTimeout: '2m', heartbeatTimeout: '5s', retry });
const ATTEMPT_AS_LOCAL_ACTIVITY = 'webhook-attempt-as-local-activity';

/**
 * One event to one subscription (workflow id `webhook-delivery-<executionLogId>`). Each attempt is a (local)
 * activity; the waits between them are durable timers, so a restart of any process resumes the schedule and
 * nothing retries in a process's memory. The activity says how long to wait next (the retry schedule, a longer
 * Retry-After, or null when delivered, out of retries, not retrying or the subscription is gone).
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<{ delivered: boolean; attempts: number }> {
  let attempt = input.firstAttempt ?? 1;
  const { attemptWebhookDelivery } = wf.patched(ATTEMPT_AS_LOCAL_ACTIVITY) ? local : dispatched;
  for (;;) {
    const result = await attemptWebhookDelivery({ executionLogId: input.executionLogId, attempt, redelivery: input.redelivery });
    if (result.nextDelaySeconds === null) return { delivered: result.delivered, attempts: attempt };
    await wf.sleep(result.nextDelaySeconds * 1000);
    attempt += 1;
  }
}
