import * as wf from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface WebhookDeliveryInput {
  executionLogId: string;
  /** Where the attempt count starts: 1 for a new delivery, the next number for a manual redelivery. */
  firstAttempt?: number;
  /** A manual redelivery: one attempt, whatever allowRetry says. */
  redelivery?: boolean;
}

// One attempt is one POST bounded by WEBHOOK_TIMEOUT_SECONDS (10 s) plus two short database writes. A failure
// of the activity itself (database down, worker killed) is retried with backoff; the attempt number keys the
// log write, so a retry never counts an attempt twice. The activity heartbeats during the POST: a worker that
// dies mid-attempt is noticed after 5 s and the attempt runs again elsewhere (same message id and body).
const { attemptWebhookDelivery } = wf.proxyActivities<Activities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '5s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', nonRetryableErrorTypes: ['NOT_FOUND'] },
});

/**
 * One event to one subscription (workflow id `webhook-delivery-<executionLogId>`). Each attempt is an
 * activity; the waits between them are durable timers, so a restart of any process resumes the schedule and
 * nothing retries in a process's memory. The activity says how long to wait next (the retry schedule, a longer
 * Retry-After, or null when delivered, out of retries, not retrying or the subscription is gone).
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<{ delivered: boolean; attempts: number }> {
  let attempt = input.firstAttempt ?? 1;
  for (;;) {
    const result = await attemptWebhookDelivery({ executionLogId: input.executionLogId, attempt, redelivery: input.redelivery });
    if (result.nextDelaySeconds === null) return { delivered: result.delivered, attempts: attempt };
    await wf.sleep(result.nextDelaySeconds * 1000);
    attempt += 1;
  }
}
