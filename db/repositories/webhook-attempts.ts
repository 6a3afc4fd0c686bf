/**
 * Delivery attempts (table `webhook_attempts`): one row per attempt of a delivery, kept as Svix keeps its message
 * attempts. Two ways in:
 * - the attempt activity (webhooks/delivery-activities.ts) writes straight through the driver (`rawQuery`,
 *   prepared), outside any transaction, so no connection is held during the POST. Tenant: none applied; it runs in
 *   a worker's system scope, the log id (from the workflow) names the row and the customer is copied from it;
 * - the customer's list goes through the list machinery, which adds the customer from the EntityManager's scope.
 */
import type { AttemptTrigger, WebhookAttempt } from '../entities';
import { WebhookAttemptSchema } from '../entities';
import type { Em } from '../orm';
import { numbered, rawQuery } from '../raw';
import type { ListResource } from './lists';

// The attempt's row before anything is sent. A retried activity finds it there (no row comes back): the first
// try may have reached the receiver, so it must not send the same attempt again.
const BEGIN_ATTEMPT = numbered(`insert into webhook_attempts
    (id, customer_id, execution_log_id, attempt, trigger, waited_ms, created_at)
  select gen_random_uuid(), l.customer_id, l.id, ?::int, ?::text, ?::int, now() from execution_logs l where l.id = ?
  on conflict (execution_log_id, attempt) do nothing
  returning id`);

/** Writes attempt n as begun; false when it was begun before (a retried activity). */
export async function beginAttempt(
  em: Em,
  a: { executionLogId: string; attempt: number; trigger: AttemptTrigger; waitedMs: number },
): Promise<boolean> {
  const rows = await rawQuery(em, BEGIN_ATTEMPT, [a.attempt, a.trigger, Math.round(a.waitedMs), a.executionLogId], {
    prepared: 'cambio-delivery-attempt-begin',
  });
  return rows.length === 1;
}

// How long ago attempt n began, on the database's clock (the row's `created_at` is), while it is open.
const OPEN_ATTEMPT_AGE = numbered(`select (extract(epoch from now() - created_at) * 1000)::float8 as age_ms
  from webhook_attempts where execution_log_id = ? and attempt = ? and finished_at is null`);

/** Milliseconds since attempt n began, or null when it is finished (or was never begun). */
export async function openAttemptAgeMs(em: Em, executionLogId: string, attempt: number): Promise<number | null> {
  const [row] = await rawQuery<{ age_ms: number }>(em, OPEN_ATTEMPT_AGE, [executionLogId, attempt], {
    prepared: 'cambio-delivery-attempt-open-age',
  });
  return row ? Number(row.age_ms) : null;
}

/** What attempt n did, as its row and the log record it. */
export interface FinishedAttempt {
  attempt: number;
  /** 0 when no response came back. */
  httpStatus: number;
  status: 'SUCCESS' | 'FAILED';
  error: string | null;
  /** The URL it was sent to (the subscription's at the time of the attempt). */
  url: string;
  durationMs: number;
  responseBody: string | null;
}

// The attempt's outcome and the log's summary of it in one statement: both or neither. Only an attempt still open
// is finished, so of an attempt cut short (its retried activity closes it) and the original finishing late, the
// first to write wins and the other changes nothing. The log's `attempts < n` guard keeps a later attempt's summary.
// A failure sets `next_attempt` to n until the attempt's bookkeeping (settleAttempt, a statement later, retried
// after a crash) replaces it with n + 1 or null: in between the log is FAILED with its retries not yet scheduled,
// and recover or redelivery, which take a FAILED log with no `next_attempt`, would queue attempt n + 1 beside the
// workflow's own (decision 0206). A success clears it (nothing comes next). A marker past n (queued meanwhile) stays.
const FINISH_ATTEMPT = numbered(`with p as (
    select ?::uuid as log_id, ?::int as attempt, ?::int as http_status, ?::text as status, ?::text as error,
      ?::text as url, ?::int as duration_ms, ?::text as response_body
  ),
  a as (
    update webhook_attempts a set finished_at = now(), http_status = p.http_status, duration_ms = p.duration_ms,
      error = p.error, response_body = p.response_body
    from p where a.execution_log_id = p.log_id and a.attempt = p.attempt and a.finished_at is null
    returning a.id
  ),
  l as (
    update execution_logs l set attempts = p.attempt, http_status = p.http_status, status = p.status,
      error = p.error, url = p.url, updated_at = now(),
      next_attempt = case when l.next_attempt > p.attempt then l.next_attempt
        when p.status = 'FAILED' then p.attempt end
    from p where l.id = p.log_id and l.attempts < p.attempt and exists (select 1 from a)
    returning l.id
  )
  select (select count(*)::int from a) as finished`);

/** Finishes attempt n and records it in the log; false when someone else finished it first. */
export async function finishAttempt(em: Em, executionLogId: string, a: FinishedAttempt): Promise<boolean> {
  const values = [executionLogId, a.attempt, a.httpStatus, a.status, a.error, a.url, a.durationMs, a.responseBody];
  const rows = await rawQuery<{ finished: number }>(em, FINISH_ATTEMPT, values, {
    prepared: 'cambio-delivery-attempt-finish',
  });
  return rows[0]?.finished === 1;
}

/** A delivery's finished attempts, for their list page (list conventions, no filters). */
export function attemptList(executionLogId: string): ListResource<WebhookAttempt> {
  return {
    entity: WebhookAttemptSchema,
    from: 'webhook_attempts a',
    alias: 'a',
    catalogue: {},
    where: { sql: 'a.execution_log_id = ? and a.finished_at is not null', params: [executionLogId] },
  };
}
