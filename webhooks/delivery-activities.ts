import { Context } from '@temporalio/activity';
import { systemEm, type Em } from '../db/orm';
import type { ExecutionLog, WebhookSubscription } from '../db/entities';
import type { AttemptTrigger } from '../db/entities';
import {
  closeForDeletedSubscription,
  failWithoutAttempt,
  readLogAndSubscription,
} from '../db/repositories/execution-logs';
import { beginAttempt, finishAttempt, openAttemptAgeMs } from '../db/repositories/webhook-attempts';
import { afterAttempt, AttemptSent } from '../db/repositories/webhook-recovery';
import { CambioError } from '../domain/errors';
import { openSecret } from './secrets';
import { AttemptOutcome, postWebhook, signedHeaders } from './send';
import { checkWebhookUrl, dnsResolve } from './url-policy';
import { EndpointPermits, Permit } from './endpoint-permits';
import type { ActivityDeps } from '../activities/deps';
import { asActivity } from '../activities/failures';
import { attemptMayBeOpenSeconds } from './attempt-bound';

export interface DeliveryAttempt {
  executionLogId: string;
  /** 1 for the first attempt; a redelivery continues the count. Keys the attempt: a retry never counts twice. */
  attempt: number;
  /** A manual redelivery is one attempt, never retried. */
  redelivery?: boolean;
  /**
   * The subscription's cap of attempts in flight applies to this attempt, because its caller understands a busy
   * answer (workflows on the webhook queue): over the cap the attempt is not made and the answer says how long to
   * wait. Histories whose attempts ran as local activities or on their own task queue never ask. (The name is in
   * recorded activity inputs: it stays.)
   */
  capped?: boolean;
  /** Why this attempt is made (the attempts list shows it); SCHEDULED when absent, REDELIVERY for older ones. */
  trigger?: AttemptTrigger;
  /** How long this attempt has waited for a free slot of its endpoint so far (busy answers), ms. */
  waitedMs?: number;
}

export interface AttemptResult {
  delivered: boolean;
  /** Seconds until the next attempt, or null when the delivery is over. */
  nextDelaySeconds: number | null;
  /**
   * Nothing was sent: the subscription already has WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight in this
   * process. Try the same attempt again after this many milliseconds (it is not counted).
   */
  busyRetryMs?: number;
  /**
   * The number of the attempt this answer is about, when not the one asked for: an attempt cut short (its worker
   * died) is recorded as interrupted and the next number is made in its place.
   */
  attempt?: number;
}

// A Retry-After longer than this is not taken literally: a receiver cannot park a delivery for days.
const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;
// Well inside the workflow's 5 s heartbeat timeout.
const HEARTBEAT_INTERVAL_MS = 1000;
// What an attempt needs besides its POST's timeout: the URL check's bounded DNS lookups and its two statements.
const POST_ROOM_SECONDS = 15;

export function createWebhookActivities(deps: ActivityDeps) {
  const resolve = deps.resolveHost ?? dnsResolve;
  // One set per process: both workers of a process share these activities (worker/main.ts).
  const permits = new EndpointPermits(deps.config.webhookEndpointConcurrency, deps.config.webhookTimeoutSeconds * 1000);
  // The same permits keyed by customer: many subscriptions of one customer, all hanging, still hold at most this
  // many of the process's delivery slots, so other customers' deliveries keep theirs.
  const customerPermits = new EndpointPermits(
    deps.config.webhookCustomerConcurrency,
    deps.config.webhookTimeoutSeconds * 1000,
  );

  /**
   * The customer's permit, then the subscription's. The customer's is taken without waiting in the process (its
   * attempts may be anyone's, slow or not), and given back unused when the subscription has none free.
   */
  async function takePermits(sub: WebhookSubscription): Promise<{ permits: Permit[] } | { retryInMs: number }> {
    const ofCustomer = customerPermits.tryAcquire(sub.customerId);
    if ('retryInMs' in ofCustomer) return ofCustomer;
    const ofSubscription = await permits.acquire(sub.id);
    if ('retryInMs' in ofSubscription) {
      ofCustomer.permit.abandon();
      return ofSubscription;
    }
    return { permits: [ofSubscription.permit, ofCustomer.permit] };
  }

  /** After attempt `n` failed: the schedule's delay, or a longer Retry-After; null when retries are over. */
  function nextDelay(
    sub: WebhookSubscription,
    input: DeliveryAttempt,
    outcome: Pick<AttemptOutcome, 'ok' | 'retryAfterSeconds'>,
  ): number | null {
    if (outcome.ok || input.redelivery || !sub.allowRetry || sub.deletedAt) return null;
    const scheduled = deps.config.webhookRetryScheduleSeconds[input.attempt - 1];
    if (scheduled === undefined) return null;
    return Math.max(scheduled, Math.min(outcome.retryAfterSeconds ?? 0, MAX_RETRY_AFTER_SECONDS));
  }

  /** Signing secrets, newest first: the previous one too while a rotation's overlap lasts. */
  function secretsOf(sub: WebhookSubscription, at: Date): string[] {
    const key = deps.config.webhookSecretKey;
    const secrets = [openSecret(sub.secretEncrypted, key)];
    if (sub.previousSecretEncrypted && sub.previousSecretExpiresAt && sub.previousSecretExpiresAt > at) {
      secrets.push(openSecret(sub.previousSecretEncrypted, key));
    }
    return secrets;
  }

  async function send(sub: WebhookSubscription, log: ExecutionLog, cancelled?: AbortSignal): Promise<AttemptOutcome> {
    let checked;
    try {
      checked = await checkWebhookUrl(sub.url, { allowPrivate: deps.config.webhookAllowPrivateUrls, resolve });
    } catch (err) {
      // Refused before anything is sent (decision 0029): FAILED, httpStatus 0, the reason as the error.
      if (err instanceof CambioError) return { httpStatus: 0, ok: false, error: err.message };
      throw err;
    }
    const at = new Date();
    const headers = signedHeaders(
      { messageId: log.messageId, eventType: log.eventType, payload: log.payload },
      secretsOf(sub, at),
      at,
    );
    return postWebhook({
      url: checked.url,
      address: checked.address,
      headers,
      body: log.payload,
      timeoutMs: deps.config.webhookTimeoutSeconds * 1000,
      cancelled,
    });
  }

  /**
   * Returns once attempt n, begun by a try that was cut short and never finished, can no longer be in flight: the
   * retry came after Temporal stopped hearing that try's heartbeats, which a worker cut off from Temporal, or stalled,
   * does not notice, and its POST runs on until its own timeout (decision 0343). A dead worker's attempt costs the
   * same wait; the delivery still goes on.
   */
  async function untilCutAttemptEnded(em: Em, executionLogId: string, n: number, ctx?: Context): Promise<void> {
    const ageMs = await openAttemptAgeMs(em, executionLogId, n);
    let waitMs = ageMs === null ? 0 : attemptMayBeOpenSeconds(deps.config) * 1000 - ageMs;
    if (ctx && !ctx.info.isLocal) {
      // Within this try's own start-to-close, with room left for its POST: a longer wait would time the retry out,
      // and each retry after it would find its own attempt begun, without end.
      const left = ctx.info.currentAttemptScheduledTimestampMs + ctx.info.startToCloseTimeoutMs - Date.now();
      waitMs = Math.min(waitMs, left - (deps.config.webhookTimeoutSeconds + POST_ROOM_SECONDS) * 1000);
    }
    if (waitMs <= 0) return;
    // A cancellation (the delivery stopped) ends the wait: the activity's sleep rejects with it.
    await (ctx ? ctx.sleep(waitMs) : new Promise((resolve) => setTimeout(resolve, waitMs)));
  }

  return {
    /**
     * One delivery attempt: check the URL rules, sign, POST, record the outcome in the attempt's row and the
     * execution log. The log's `attempts` keys the write: if attempt n is already recorded (a retry after a crash
     * past the write), its stored outcome is returned and nothing is sent again. The attempt's row is written
     * before the POST: a retry that finds it begun but not finished (the worker died or the heartbeat timed out
     * mid-attempt) records it FAILED as interrupted and makes attempt n + 1 in its place, so the delivery survives
     * the crash and a receiver gets one POST per attempt, each one listed. A cancelled attempt aborts its POST.
     * No database connection is held during the POST: each statement runs on a pooled connection only while it runs.
     */
    async attemptWebhookDelivery(input: DeliveryAttempt): Promise<AttemptResult> {
      return asActivity(async () => {
        const ctx = activityContext();
        const stopHeartbeat = keepHeartbeating(ctx);
        try {
          const em = systemEm(deps.orm);
          // A retry: the try cut short may still be sending this attempt. Wait it out first (before the endpoint's
          // permits, which the subscription's and the customer's other deliveries need meanwhile), then read the
          // delivery and its subscription as they are after the wait: paused, deleted or pointed elsewhere meanwhile,
          // it is treated as such. A first try has no earlier one to wait for, and spends no statement on it.
          if (!ctx || ctx.info.attempt > 1) await untilCutAttemptEnded(em, input.executionLogId, input.attempt, ctx);
          const { log, sub } = await readLogAndSubscription(em, input.executionLogId);
          // Subscription health and the next attempt (db/repositories/webhook-recovery.ts): may auto-disable.
          const settleAs = (n: number, sent: AttemptSent, r: AttemptResult) =>
            afterAttempt(em, { log, sub, attempt: n, sent }, deps.config.webhookDisableAfterSeconds, r);
          const settle = (sent: AttemptSent, r: AttemptResult) => settleAs(input.attempt, sent, r);
          // What the log holds already (a retry after the write): its last attempt, not sent again.
          const stored = async () => {
            const again = log.attempts >= input.attempt ? log : (await readLogAndSubscription(em, log.id)).log;
            const n = Math.max(again.attempts, input.attempt);
            const ok = again.status === 'SUCCESS';
            const sent = again.status === 'PENDING' ? null : again.status;
            const r = { delivered: ok, nextDelaySeconds: nextDelay(sub, { ...input, attempt: n }, { ok }) };
            return settleAs(n, sent, n === input.attempt ? r : { ...r, attempt: n });
          };
          if (log.attempts >= input.attempt) return stored();
          const over = { delivered: false, nextDelaySeconds: null };
          // Deleting a subscription stops every future attempt; what was recorded stays readable, and a delivery
          // never attempted is closed so that it is readable too (decision 0365).
          if (sub.deletedAt) {
            await closeForDeletedSubscription(em, log.id);
            return settle(null, over);
          }
          // Disabling one stops them too, but what was due is kept: FAILED SUBSCRIPTION_DISABLED, for recover.
          if (sub.status === 'DISABLED') {
            await failWithoutAttempt(em, log.id, 'SUBSCRIPTION_DISABLED');
            return settle(null, over);
          }
          let held: Permit[] = [];
          if (input.capped) {
            const taken = await takePermits(sub);
            if ('retryInMs' in taken) {
              // The wait is bounded: past it the delivery ends FAILED ENDPOINT_BUSY, listed and recoverable.
              if ((input.waitedMs ?? 0) >= deps.config.webhookMaxBusyWaitSeconds * 1000) {
                await failWithoutAttempt(em, log.id, 'ENDPOINT_BUSY');
                return settle(null, over);
              }
              return { ...over, busyRetryMs: taken.retryInMs };
            }
            held = taken.permits;
          }
          const finish = (n: number, outcome: AttemptOutcome) =>
            finishAttempt(em, log.id, {
              attempt: n,
              httpStatus: outcome.httpStatus,
              status: outcome.ok ? 'SUCCESS' : 'FAILED',
              error: outcome.error,
              url: sub.url,
              durationMs: outcome.durationMs ?? 0,
              responseBody: outcome.responseBody ?? null,
            });
          let n = input.attempt;
          let outcome: AttemptOutcome | undefined;
          try {
            const trigger = input.trigger ?? (input.redelivery ? 'REDELIVERY' : 'SCHEDULED');
            const begin = () => beginAttempt(em, { executionLogId: log.id, attempt: n, trigger, waitedMs: 0 });
            const first = { executionLogId: log.id, attempt: n, trigger, waitedMs: input.waitedMs ?? 0 };
            // Attempt n begun before and never finished: an earlier try was cut short after it may have sent. It
            // is recorded as interrupted, not sent again, and the next number is made in its place.
            let fresh = await beginAttempt(em, first);
            while (!fresh) {
              // The try that began it may still be sending (its heartbeats lost, not its process): not beside it.
              await untilCutAttemptEnded(em, log.id, n, ctx);
              if (!(await finish(n, INTERRUPTED))) break; // finished meanwhile by the try that began it
              n += 1;
              fresh = await begin();
            }
            if (fresh) outcome = await send(sub, log, ctx?.cancellationSignal);
          } finally {
            held.forEach((p) => p.release());
          }
          // Another try of this attempt finished it first (this one was cut short and came back late): its record
          // stands.
          if (!outcome || !(await finish(n, outcome))) return stored();
          const next = nextDelay(sub, { ...input, attempt: n }, outcome);
          const result = {
            delivered: outcome.ok,
            nextDelaySeconds: next,
            ...(n === input.attempt ? {} : { attempt: n }),
          };
          return settleAs(n, outcome.ok ? 'SUCCESS' : 'FAILED', result);
        } finally {
          stopHeartbeat();
        }
      });
    },
  };
}

// A retried activity found its attempt begun and not finished: the first try may have reached the receiver, so
// that attempt is not made again; it is recorded as failed, and the next number is sent in its place.
const INTERRUPTED: AttemptOutcome = {
  httpStatus: 0,
  ok: false,
  error: 'interrupted: the worker stopped or lost the attempt mid-way; it was not sent again',
  durationMs: 0,
  responseBody: null,
};

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined; // called outside an activity (a unit test)
  }
}

/**
 * Heartbeats while the attempt runs, so a worker that dies mid-attempt is noticed within the heartbeat timeout
 * (seconds) rather than the start-to-close timeout, and the attempt is retried on another worker. A local
 * activity (deliveries started while attempts were local) has no heartbeat: its workflow task timing out is what
 * notices a dead worker.
 */
function keepHeartbeating(ctx: Context | undefined): () => void {
  // Outside an activity (a unit test) there is nothing to heartbeat to. The heartbeat is also how a cancellation
  // reaches the attempt (its cancellationSignal aborts the POST).
  if (!ctx || ctx.info.isLocal) return () => undefined;
  const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_INTERVAL_MS);
  return () => clearInterval(timer);
}
