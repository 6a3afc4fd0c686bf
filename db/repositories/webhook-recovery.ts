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

// The workflow id of a queued attempt, set with the marker (`queued_workflow_id`, returned to the outbox insert) in
// the statement that picks the delivery: it names the attempt and this queue of it (a random suffix). An attempt
// closed without being made (the subscription DISABLED, the endpoint busy) keeps its number, and the next recover
// must start a workflow of its own for it, not find the closed one's id and start nothing (decision 0205). Kept on
// the log, so that a marker whose workflows have all ended can be told from one still held (decision 0259).
const QUEUED_WORKFLOW_ID =
  "? || l.id || '-attempt-' || (l.attempts + 1) || '-' || left(md5(gen_random_uuid()::text), 12)";

// One outbox row per picked delivery, through the one outbox insert. `next_attempt` lets one queue attempt n at a
// time; the row is started once (the relay's REJECT_DUPLICATE), and the attempt number keys the send.
const attemptStarts = (trigger: 'RECOVERY' | 'REDELIVERY', label: string) =>
  outboxInsert(
    {
      workflowId: 'p.queued_workflow_id',
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
       update execution_logs l set next_attempt = l.attempts + 1, queued_workflow_id = ${QUEUED_WORKFLOW_ID}
       where l.customer_id = ? and l.subscription_id = ? and l.status = 'FAILED'
         and l.next_attempt is null and l.created_at >= ?::timestamptz and l.created_at < ?::timestamptz
       returning l.id, l.next_attempt, l.queued_workflow_id, l.event_type, l.url
     ),
     queued as (
       ${RECOVERY_STARTS}
       on conflict (workflow_id) do nothing
     )
     select count(*)::int as count from picked`,
    [
      ...[webhookDeliveryWorkflowId(''), customerId, subscriptionId, since, until],
      ...[taskQueue, JSON.stringify({ CustomerId: customerId })],
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
       update execution_logs l set next_attempt = l.attempts + 1, queued_workflow_id = ${QUEUED_WORKFLOW_ID}
       where l.customer_id = ? and l.subscription_id = ? and l.id = ? and l.status <> 'PENDING'
         and l.next_attempt is null
       returning l.id, l.next_attempt, l.queued_workflow_id, l.event_type, l.url
     ),
     queued as (
       ${REDELIVERY_STARTS}
       on conflict (workflow_id) do nothing
     )
     select next_attempt from picked`,
    [
      ...[webhookDeliveryWorkflowId(''), customerId, subscriptionId, executionLogId],
      ...[taskQueue, JSON.stringify({ CustomerId: customerId })],
    ],
  )) as Array<{ next_attempt: number }>;
  return rows[0]?.next_attempt ?? null;
}

/**
 * The customer's deliveries of the subscription created in [since, until) that recover skips, oldest first, at most
 * `limit`: FAILED ones marked in progress, and PENDING ones (first attempt not ended). Some may be stranded: their
 * workflows all ended.
 */
export async function skippedDeliveries(
  em: Em,
  subscriptionId: string,
  since: string,
  until: string,
  limit: number,
): Promise<string[]> {
  const rows = (await em.execute(
    `select l.id from execution_logs l
     where l.customer_id = ? and l.subscription_id = ?
       and (l.status = 'FAILED' and l.next_attempt is not null or l.status = 'PENDING')
       and l.created_at >= ?::timestamptz and l.created_at < ?::timestamptz
     order by l.created_at, l.id limit ?`,
    [tenantOf(em), subscriptionId, since, until, limit],
  )) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}

/** A delivery's marker (`next_attempt`) and what may still act on it, read under the log's row lock. */
export interface DeliveryMark {
  /** PENDING until its first attempt ends (or it is closed without one). */
  status: string;
  nextAttempt: number | null;
  /** The workflow recover or redelivery last queued for it (null: none); the delivery's own is named by its id. */
  queuedWorkflowId: string | null;
  /** An outbox row of one of its workflows is not started yet. */
  startQueued: boolean;
  /** One of its attempts began within the window and has not finished: its POST may still be in flight. */
  attemptOpen: boolean;
}

/**
 * In the caller's transaction: locks the customer's delivery row until the transaction ends (the attempt's
 * bookkeeping and every queue of an attempt wait on it) and reads its marker with what may still act on it. An
 * attempt begun `openWithinSeconds` ago or less and not finished counts as in flight: a terminated workflow's attempt
 * runs on until its POST's timeout or its next heartbeat. Null when the log is not the customer's.
 */
export async function lockDeliveryMark(
  em: Em,
  executionLogId: string,
  openWithinSeconds: number,
): Promise<DeliveryMark | null> {
  const rows = (await em.execute(
    `select l.status, l.next_attempt, l.queued_workflow_id,
       exists (select 1 from workflow_starts w where starts_with(w.workflow_id, ? || l.id::text)) as start_queued,
       exists (select 1 from webhook_attempts a where a.execution_log_id = l.id and a.finished_at is null
               and a.created_at > now() - make_interval(secs => ?)) as attempt_open
     from execution_logs l where l.customer_id = ? and l.id = ? for update of l`,
    [webhookDeliveryWorkflowId(''), openWithinSeconds, tenantOf(em), executionLogId],
  )) as Array<{
    status: string;
    next_attempt: number | null;
    queued_workflow_id: string | null;
    start_queued: boolean;
    attempt_open: boolean;
  }>;
  const row = rows[0];
  if (!row) return null;
  return {
    status: row.status,
    nextAttempt: row.next_attempt,
    queuedWorkflowId: row.queued_workflow_id,
    startQueued: row.start_queued,
    attemptOpen: row.attempt_open,
  };
}

/**
 * Takes back a marker no workflow will act on (every workflow of the delivery has ended: decision 0259), in the
 * caller's transaction, under the lock `lockDeliveryMark` took; only the marker that was read, so nothing queued
 * since is lost.
 */
export async function releaseDeliveryMark(em: Em, executionLogId: string, nextAttempt: number): Promise<void> {
  await em.execute(
    'update execution_logs set next_attempt = null where customer_id = ? and id = ? and next_attempt = ?',
    [tenantOf(em), executionLogId, nextAttempt],
  );
}

/**
 * Closes a delivery whose workflow ended before its first attempt did (decision 0260): FAILED `DELIVERY_STOPPED`,
 * `httpStatus` 0, as a delivery closed without an attempt is, so it is listed and recover queues it. In the caller's
 * transaction, under the lock `lockDeliveryMark` took; only while it is still PENDING.
 */
export async function closeStoppedDelivery(em: Em, executionLogId: string): Promise<void> {
  await em.execute(
    `update execution_logs set status = 'FAILED', error = 'DELIVERY_STOPPED', http_status = 0, updated_at = now()
     where customer_id = ? and id = ? and status = 'PENDING'`,
    [tenantOf(em), executionLogId],
  );
}

/** Re-enabling starts the failure tracking afresh (a paused subscription keeps none). */
export const HEALTH_RESET = { failingSince: null, failedAttempts: 0, disabledAt: null, disabledReason: null } as const;
