import * as wf from '@temporalio/workflow';
import type { RetryPolicy } from '@temporalio/common';
import type { WebhookDeliveryActivities } from '../activities';

export interface WebhookDeliveryInput {
  executionLogId: string;
  /** Where the attempt count starts: 1 for a new delivery, the next number for a manual redelivery. */
  firstAttempt?: number;
  /** A manual redelivery: one attempt, whatever allowRetry says. */
  redelivery?: boolean;
  /** Who asked for this run's attempt (recover, redelivery); SCHEDULED when absent. */
  trigger?: 'SCHEDULED' | 'REDELIVERY' | 'RECOVERY';
  /** Time already waited for a free slot of the endpoint by earlier runs (continued as new), ms. */
  busyWaitedMs?: number;
}

// One attempt is one POST bounded by WEBHOOK_TIMEOUT_SECONDS (10 s) plus two short database writes. A failure
// of the attempt itself (database down, worker killed) is retried with backoff; the attempt number keys the
// log write, so a retry never counts an attempt twice.
const retry: RetryPolicy = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '1m',
  nonRetryableErrorTypes: ['NOT_FOUND'],
};

// Current path: the attempt is an ordinary activity on the workflow's own task queue, the webhook queue
// (TEMPORAL_WEBHOOK_TASK_QUEUE), so it takes a delivery worker's activity slot and never one of the slots that
// settle money. An HTTP call to a third party is not a local activity: it would run inside the workflow task,
// on the local-activity slots the workflow's worker shares with settlement. It heartbeats, so a worker that dies
// mid-attempt is noticed after 5 s, and start-to-close bounds a stuck one.
const onWebhookQueue = wf.proxyActivities<WebhookDeliveryActivities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '5s',
  retry,
});
const ATTEMPT_ON_WEBHOOK_QUEUE = 'webhook-attempt-on-webhook-queue';

// A history with the marker of ATTEMPT_AS_LOCAL_ACTIVITY (and not the current one) ran its attempts as local
// activities: it replays only on that path, so it keeps it until it ends.
const asLocalActivity = wf.proxyLocalActivities<WebhookDeliveryActivities>({ startToCloseTimeout: '2m', retry });
const ATTEMPT_AS_LOCAL_ACTIVITY = 'webhook-attempt-as-local-activity';

// A history with neither marker ran its attempts as ordinary activities on its workflow's task queue: it replays
// only on that path. Both older paths can go once no such delivery is open (its retries end within about 28 h);
// then `deprecatePatch(ATTEMPT_ON_WEBHOOK_QUEUE)` replaces the `patched` call below.
const onOwnTaskQueue = wf.proxyActivities<WebhookDeliveryActivities>({
  startToCloseTimeout: '2m',
  heartbeatTimeout: '5s',
  retry,
});

// With this marker a delivery bounds its wait for an endpoint at its cap of attempts in flight: it counts the time
// waited, hands it to the attempt (which ends the delivery FAILED ENDPOINT_BUSY past WEBHOOK_MAX_BUSY_WAIT_SECONDS,
// and shows the wait in the attempts list), and continues as new every BUSY_WAITS_PER_RUN waits so a long backlog
// keeps a short history.
const BUSY_WAIT_BOUNDED = 'webhook-busy-wait-bounded';
// About 600 history events per run (each wait is an activity and a timer): far under Temporal's 10k warning.
export const BUSY_WAITS_PER_RUN = 100;

/**
 * One event to one subscription (workflow id `webhook-delivery-<executionLogId>`), on the webhook task queue.
 * Each attempt is an activity; the waits between them are durable timers, so a restart of any process resumes
 * the schedule and nothing retries in a process's memory. The activity says how long to wait next (the retry
 * schedule, a longer Retry-After, or null when delivered, out of retries, not retrying or the subscription is
 * gone), or that the subscription has its cap of attempts in flight: then the same attempt is tried again
 * after the wait it names, on a timer, without holding an activity slot and without counting an attempt.
 */
export async function webhookDeliveryWorkflow(
  input: WebhookDeliveryInput,
): Promise<{ delivered: boolean; attempts: number }> {
  let attempt = input.firstAttempt ?? 1;
  // The order matters for replay: a history that has the newer marker never asks for the older one.
  const onCurrentPath = wf.patched(ATTEMPT_ON_WEBHOOK_QUEUE);
  const path = onCurrentPath
    ? onWebhookQueue
    : wf.patched(ATTEMPT_AS_LOCAL_ACTIVITY)
      ? asLocalActivity
      : onOwnTaskQueue;
  // Older histories (no marker) keep their activity input and their unbounded wait exactly as they were.
  const bounded = onCurrentPath && wf.patched(BUSY_WAIT_BOUNDED);
  let waitedMs = input.busyWaitedMs ?? 0;
  let waits = 0;
  for (;;) {
    const result = await path.attemptWebhookDelivery({
      executionLogId: input.executionLogId,
      attempt,
      redelivery: input.redelivery,
      // Only the current path understands a busy answer (`capped`: the endpoint's cap of attempts in flight
      // applies); older histories keep their input as it was.
      ...(onCurrentPath ? { capped: true } : {}),
      ...(bounded ? { waitedMs, ...(input.trigger ? { trigger: input.trigger } : {}) } : {}),
    });
    if (result.busyRetryMs !== undefined) {
      await wf.sleep(result.busyRetryMs);
      if (!bounded) continue;
      waitedMs += result.busyRetryMs;
      if (++waits >= BUSY_WAITS_PER_RUN) {
        await wf.continueAsNew<typeof webhookDeliveryWorkflow>({
          ...input,
          firstAttempt: attempt,
          busyWaitedMs: waitedMs,
        });
      }
      continue;
    }
    // The wait was for this attempt: the next one (a scheduled retry) starts its own count.
    waitedMs = 0;
    // An attempt cut short by a dead worker was recorded as interrupted and the next number made in its place.
    if (result.attempt !== undefined) attempt = result.attempt;
    if (result.nextDelaySeconds === null) return { delivered: result.delivered, attempts: attempt };
    await wf.sleep(result.nextDelaySeconds * 1000);
    attempt += 1;
  }
}
