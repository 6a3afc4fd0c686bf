// The relay's statements on the outbox (`workflow_starts`), through the EntityManager's connection (em.execute).
// System-wide on purpose: the relay acts for every customer, and a row carries no tenant of its own. Each function
// is one statement, so each is its own short transaction: no row lock or pooled connection is held while the
// caller talks to Temporal.
import type { Em } from '../orm';

export interface PendingStart {
  workflow_id: string;
  workflow_type: string;
  task_queue: string | null;
  args: unknown[];
  search_attributes: Record<string, string>;
  /** The Temporal UI's one-line summary (`staticSummary`). */
  summary: string | null;
}

// A row that failed waits 0.5 s, 1 s, 2 s ... doubling up to this before its next attempt: a poison row costs one
// start attempt per 10 s, and a start that failed because Temporal was down is retried soon after it is back.
const MAX_BACKOFF_SECONDS = 10;

/**
 * Claims up to `limit` rows of `taskQueue` (and of rows from before task queues were recorded) that are due and not
 * leased by another relay, leasing them for `leaseMs`. Rows are taken by their next attempt time, so rows that keep
 * failing go to the back of the line. SKIP LOCKED: two relays claiming at once take disjoint rows.
 */
export async function claimStarts(em: Em, taskQueue: string, limit: number, leaseMs: number): Promise<PendingStart[]> {
  return (await em.execute(
    `update workflow_starts w set claimed_until = now() + ? * interval '1 millisecond', attempts = w.attempts + 1
     from (select workflow_id from workflow_starts
           where (task_queue = ? or task_queue is null) and next_attempt_at <= now()
             and (claimed_until is null or claimed_until < now())
           order by next_attempt_at, created_at limit ? for update skip locked) due
     where w.workflow_id = due.workflow_id
     returning w.workflow_id, w.workflow_type, w.task_queue, w.args, w.search_attributes, w.summary`,
    [leaseMs, taskQueue, limit],
  )) as PendingStart[];
}

/** Removes rows whose workflow is started. */
export async function finishStarts(em: Em, workflowIds: string[]): Promise<void> {
  if (workflowIds.length) await em.execute('delete from workflow_starts where workflow_id in (?)', [workflowIds]);
}

/** Releases rows whose start failed, each due again after its backoff. */
export async function deferStarts(em: Em, workflowIds: string[]): Promise<void> {
  if (!workflowIds.length) return;
  await em.execute(
    `update workflow_starts set claimed_until = null,
       next_attempt_at = now() + least(${MAX_BACKOFF_SECONDS}, 0.25 * power(2, least(attempts, 10))) * interval '1 second'
     where workflow_id in (?)`,
    [workflowIds],
  );
}

/** The row of one workflow, whatever its lease (a caller that must start it now). */
export async function pendingStart(em: Em, workflowId: string): Promise<PendingStart | undefined> {
  const rows = (await em.execute(
    'select workflow_id, workflow_type, task_queue, args, search_attributes, summary from workflow_starts where workflow_id = ?',
    [workflowId],
  )) as PendingStart[];
  return rows[0];
}
