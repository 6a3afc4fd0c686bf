/**
 * Subscription health (auto-disable) and recovery of failed deliveries (decisions 0042, 0044).
 * SQL on `execution_logs` and `webhook_subscriptions`. The attempt's bookkeeping runs outside any transaction
 * through the driver (`rawQuery`, prepared; a worker's system scope: the log id names the row); recovery runs in
 * the request's transaction through its EntityManager (`em.execute`), with the customer taken from that
 * EntityManager's tenant scope (`tenantOf`).
 */
import type { Em } from '../orm';
import { tenantOf } from '../orm';
import { numbered, rawQuery } from '../raw';
import { webhookDeliveryWorkflowId } from '../../workflows/ids';
import { outboxInsert } from './outbox';

/** What one attempt did: SUCCESS or FAILED when it sent (or was refused by the URL rules), null when it did not. */
export type AttemptSent = 'SUCCESS' | 'FAILED' | null;

export interface SettledAttempt {
  executionLogId: string;
  attempt: number;
  sent: AttemptSent;
  /** The attempt the workflow will make next, or null when the delivery is over. */
  nextAttempt: number | null;
  disableAfterSeconds: number;
  /** Takes back the attempt n + 1 this attempt scheduled (the subscription is DISABLED or deleted). */
  withdraw?: boolean;
}

// Below this many failures in the window a subscription is never disabled: one slow event a week is not an outage.
export const MIN_FAILED_ATTEMPTS_TO_DISABLE = 3;

// A failure disables once every attempt has failed for the window, with at least 3 failures in it (`p` the
// statement's parameters; `s` the subscription row before this attempt).
const FAILURE_DISABLES_SUBSCRIPTION = `p.sent = 'FAILED' and s.status = 'ACTIVE'
  and s.failed_attempts + 1 >= ${MIN_FAILED_ATTEMPTS_TO_DISABLE}
  and coalesce(s.failing_since, now()) <= now() - make_interval(secs => p.window_secs)`;

// One statement, so an attempt's bookkeeping is all or nothing:
// - `p` names the parameters once (each is used several times below);
// - `log` locks the delivery's row and says whether this attempt still has to be counted (`health_attempt < n`):
//   a retried activity counts it once;
// - `upd` records which attempt comes next (n + 1 or none) and the count. A marker past n is kept: a recover or
//   redelivery queued attempt n + 1 after attempt n ended, and a stale retry of attempt n must not erase it (else
//   another recover would queue n + 1 again). `withdraw` is the one exception: the attempt takes back the n + 1
//   it has just written itself, when the subscription turned out DISABLED or deleted;
// - `health` resets the tracking on a success (writing only when there is something to reset, so a healthy
//   endpoint's deliveries never queue on its row), or counts the failure and disables the subscription;
// - the result is whether the subscription may still be attempted.
const SETTLE_ATTEMPT = numbered(`
with p as (
  select ?::uuid as log_id, ?::int as attempt, ?::text as sent, ?::int as next_attempt, ?::int as window_secs,
    ?::boolean as withdraw
),
log as (
  select l.id, l.subscription_id, l.health_attempt < p.attempt and p.sent is not null as counts
  from execution_logs l, p where l.id = p.log_id for update of l
),
upd as (
  update execution_logs l set
    next_attempt = case when l.next_attempt is null or l.next_attempt <= p.attempt then p.next_attempt
      when p.withdraw and l.next_attempt = p.attempt + 1 then null
      else l.next_attempt end,
    health_attempt = case when log.counts then p.attempt else l.health_attempt end
  from log, p where l.id = log.id
),
health as (
  update webhook_subscriptions s set
    failing_since = case when p.sent = 'SUCCESS' then null else coalesce(s.failing_since, now()) end,
    failed_attempts = case when p.sent = 'SUCCESS' then 0 else s.failed_attempts + 1 end,
    status = case when ${FAILURE_DISABLES_SUBSCRIPTION} then 'DISABLED' else s.status end,
    disabled_at = case when ${FAILURE_DISABLES_SUBSCRIPTION} then now() else s.disabled_at end,
    disabled_reason = case when ${FAILURE_DISABLES_SUBSCRIPTION}
      then 'every delivery attempt failed for at least ' || p.window_secs::text || ' s ('
        || (s.failed_attempts + 1)::text || ' attempts)'
      else s.disabled_reason end,
    updated_at = case when ${FAILURE_DISABLES_SUBSCRIPTION} then now() else s.updated_at end
  from log, p where log.counts and s.id = log.subscription_id and (p.sent = 'FAILED' or s.failed_attempts > 0)
  returning s.status
)
select coalesce((select status from health), s.status) = 'ACTIVE' and s.deleted_at is null as active
from log join webhook_subscriptions s on s.id = log.subscription_id`);

/**
 * Records what attempt n of a delivery did for its subscription's health and which attempt comes next. Returns
 * false when the subscription is (now) DISABLED or deleted: the delivery then schedules nothing more.
 */
export async function settleAttempt(em: Em, a: SettledAttempt): Promise<boolean> {
  const rows = await rawQuery<{ active: boolean }>(
    em,
    SETTLE_ATTEMPT,
    [a.executionLogId, a.attempt, a.sent, a.nextAttempt, a.disableAfterSeconds, a.withdraw ?? false],
    { prepared: 'cambio-delivery-settle-attempt' },
  );
  return rows[0]?.active ?? false;
}

/**
 * The attempt activity's one call after an attempt (webhooks/delivery-activities.ts): settles it unless there is
 * nothing to write (a success on a healthy subscription with nothing pending, the common case: no extra round trip),
 * and turns "retry in d seconds" into "no next attempt" when the subscription is or just became DISABLED.
 */
export async function afterAttempt<R extends { delivered: boolean; nextDelaySeconds: number | null }>(
  em: Em,
  ctx: {
    log: { id: string; nextAttempt: number | null };
    sub: { failedAttempts: number };
    attempt: number;
    sent: AttemptSent;
  },
  disableAfterSeconds: number,
  result: R,
): Promise<R> {
  const nextAttempt = result.nextDelaySeconds === null ? null : ctx.attempt + 1;
  const nothingToWrite = ctx.sent === 'SUCCESS' && ctx.sub.failedAttempts === 0 && ctx.log.nextAttempt === null;
  if (nothingToWrite && nextAttempt === null) return result;
  const settled = { executionLogId: ctx.log.id, attempt: ctx.attempt, disableAfterSeconds };
  if (await settleAttempt(em, { ...settled, sent: ctx.sent, nextAttempt })) return result;
  // Disabled (maybe by this very failure) or deleted: the retry it had scheduled will not happen.
  if (nextAttempt !== null) await settleAttempt(em, { ...settled, sent: null, nextAttempt: null, withdraw: true });
  return { ...result, nextDelaySeconds: null };
}

// One outbox row per picked delivery, through the one outbox insert. `next_attempt` lets one queue attempt n at a
// time; the row is started once (the relay's REJECT_DUPLICATE), and the attempt number keys the send. The workflow
// id names the attempt and this queue of it (a random suffix): an attempt closed without being made (the
// subscription DISABLED, the endpoint busy) keeps its number, and the next recover must start a workflow of its
// own for it, not find the closed one's id and start nothing (decision 0205).
const attemptStarts = (trigger: 'RECOVERY' | 'REDELIVERY', label: string) =>
  outboxInsert(
    {
      workflowId: "? || p.id || '-attempt-' || p.next_attempt || '-' || left(md5(gen_random_uuid()::text), 12)",
      workflowType: "'webhookDeliveryWorkflow'",
      taskQueue: '?',
      args:
        "jsonb_build_array(jsonb_build_object('executionLogId', p.id, 'firstAttempt', p.next_attempt, " +
        `'redelivery', true, 'trigger', '${trigger}'))`,
      searchAttributes: '?::jsonb',
      summary: `'WEBHOOK ' || p.event_type || ' to ' || p.url || ' (${label})'`,
      createdAt: 'now()',
    },
    'picked p',
  );
const RECOVERY_STARTS = attemptStarts('RECOVERY', 'recovery');
const REDELIVERY_STARTS = attemptStarts('REDELIVERY', 'redelivery');

/**
 * Recover: in the caller's transaction, every FAILED delivery of the subscription created in [since, until) with
 * no attempt pending (no retry scheduled, no recovery or redelivery already queued) gets one more attempt, numbered
 * after its last, through the outbox: the workflow `webhook-delivery-<logId>-attempt-<n>-<queue>` runs it once the
 * transaction commits. A delivery closed without an attempt (SUBSCRIPTION_DISABLED, ENDPOINT_BUSY) is FAILED too,
 * and gets its first. Setting `next_attempt` is the lock: the update waits on a concurrent redelivery's and then
 * finds the marker set, so one of them queues the attempt; a second recover (another key, a crash and retry) finds
 * nothing to add, and the attempt number keys the send: a start repeated by the relay finds the attempt recorded
 * and sends nothing. Returns how many deliveries were queued.
 */
export async function queueRecovery(
  em: Em,
  taskQueue: string,
  subscriptionId: string,
  since: string,
  until: string,
): Promise<number> {
  const customerId = tenantOf(em);
  const rows = (await em.execute(
    `with picked as (
       update execution_logs l set next_attempt = l.attempts + 1
       where l.customer_id = ? and l.subscription_id = ? and l.status = 'FAILED'
         and l.next_attempt is null and l.created_at >= ?::timestamptz and l.created_at < ?::timestamptz
       returning l.id, l.next_attempt, l.event_type, l.url
     ),
     queued as (
       ${RECOVERY_STARTS}
       on conflict (workflow_id) do nothing
     )
     select count(*)::int as count from picked`,
    [
      ...[customerId, subscriptionId, since, until],
      ...[webhookDeliveryWorkflowId(''), taskQueue, JSON.stringify({ CustomerId: customerId })],
    ],
  )) as Array<{ count: number }>;
  return rows[0].count;
}

/**
 * Manual redelivery: in the caller's transaction, one more attempt of a settled delivery with no attempt pending,
 * through the outbox, as recover queues it (same lock, same workflow id per attempt). Returns the attempt queued,
 * or null when one is pending (a retry scheduled, a failed attempt not yet settled, a recover or another
 * redelivery queued, the first attempt not ended): the caller answers 409 DELIVERY_IN_PROGRESS.
 */
export async function queueRedelivery(
  em: Em,
  taskQueue: string,
  subscriptionId: string,
  executionLogId: string,
): Promise<number | null> {
  const customerId = tenantOf(em);
  const rows = (await em.execute(
    `with picked as (
       update execution_logs l set next_attempt = l.attempts + 1
       where l.customer_id = ? and l.subscription_id = ? and l.id = ? and l.status <> 'PENDING'
         and l.next_attempt is null
       returning l.id, l.next_attempt, l.event_type, l.url
     ),
     queued as (
       ${REDELIVERY_STARTS}
       on conflict (workflow_id) do nothing
     )
     select next_attempt from picked`,
    [
      ...[customerId, subscriptionId, executionLogId],
      ...[webhookDeliveryWorkflowId(''), taskQueue, JSON.stringify({ CustomerId: customerId })],
    ],
  )) as Array<{ next_attempt: number }>;
  return rows[0]?.next_attempt ?? null;
}

/** Re-enabling starts the failure tracking afresh (a paused subscription keeps none). */
export const HEALTH_RESET = { failingSince: null, failedAttempts: 0, disabledAt: null, disabledReason: null } as const;
