// The outbox (`workflow_starts`): a row per workflow that a transaction decided to start. How it reaches Postgres:
// hand-written statements, either as a statement of the caller's batch (db/batch.ts) in the business transaction
// or in the relay's bookkeeping, or, for the relay's claim, one prepared statement on a pooled connection
// (db/raw.ts). Tenant: none on purpose. A row is written inside a transaction that already applied the customer's
// scope, and the relay acts for every customer; each relay statement is its own short transaction, so no row lock or
// pooled connection is held while the caller talks to Temporal.
import type { Client as PgClient } from 'pg';
import type { Em } from '../orm';
import { SqlBatch } from '../batch';
import { operationWorkflowId } from '../../workflows/ids';
import { UUID_RE } from '../../domain/uuid';
import { numbered, rawQuery, statementName } from '../raw';

/** A workflow to start once the transaction that records it commits. */
export interface WorkflowStartRequest {
  workflowId: string;
  workflowType: string;
  args: unknown[];
  /** Keyword search attributes by name (CustomerId, OperationType, OperationStatus). */
  searchAttributes: Record<string, string>;
  /** One line for the Temporal UI's list (`staticSummary`), e.g. `DEPOSIT 100.00 BRL via PIX_KEY to Acme Ltda`. */
  summary?: string | null;
  /**
   * Only for a decision's start (workflow_signals.start): a workflow of this id that was closed by hand (terminated,
   * or failed or timed out) runs again to take the decision, where one that completed keeps its outcome (decision
   * 0315). The outbox of starts never reads it.
   */
  rerunIfStopped?: boolean;
}

/** The values of an outbox row as SQL: placeholders for one row, or expressions over a row source. */
export interface OutboxRowSql {
  workflowId: string;
  workflowType: string;
  taskQueue: string;
  args: string;
  searchAttributes: string;
  summary: string;
  createdAt: string;
  /** When the relay may take it; the column's default (now) when absent. */
  nextAttemptAt?: string;
}

/**
 * The one insert of outbox rows, as text: `from` is the row source the expressions of `row` read (a CTE of the
 * caller's statement, e.g. the deliveries of an event), none for a single row of placeholders. Its COMMIT wakes
 * the relay of the row's task queue (a trigger, Migration20261124000000WorkflowStartWakeUp).
 */
export function outboxInsert(row: OutboxRowSql, from?: string): string {
  const due = row.nextAttemptAt ? [', next_attempt_at', `, ${row.nextAttemptAt}`] : ['', ''];
  return `insert into workflow_starts
       (workflow_id, workflow_type, task_queue, args, search_attributes, summary, created_at${due[0]})
     select ${row.workflowId}, ${row.workflowType}, ${row.taskQueue}, ${row.args}, ${row.searchAttributes},
       ${row.summary}, ${row.createdAt}${due[1]}${from ? `\n     from ${from}` : ''}`;
}

const ONE_ROW: OutboxRowSql = {
  workflowId: '?',
  workflowType: '?',
  taskQueue: '?',
  args: '?::jsonb',
  searchAttributes: '?::jsonb',
  summary: '?',
  createdAt: '?::timestamptz',
};
const INSERT_ONE = outboxInsert(ONE_ROW);
// One row due at a given instant; written again for the same workflow, the earlier instant stands.
const INSERT_ONE_DUE = `${outboxInsert({ ...ONE_ROW, nextAttemptAt: '?::timestamptz' })}
     on conflict (workflow_id) do update set
       next_attempt_at = least(workflow_starts.next_attempt_at, excluded.next_attempt_at),
       created_at = least(workflow_starts.created_at, excluded.created_at)`;

/** INSERT_ONE's parameters, in order. */
const oneRow = (taskQueue: string, req: WorkflowStartRequest, createdAt: Date): unknown[] => [
  req.workflowId,
  req.workflowType,
  taskQueue,
  JSON.stringify(req.args),
  JSON.stringify(req.searchAttributes),
  req.summary ?? null,
  createdAt,
];

/**
 * The outbox write as a statement of the caller's batch: inside the business transaction, record that a workflow
 * must run on `taskQueue`. Nothing is started from the writer: a process that dies right after COMMIT has nothing
 * left to do, and the relay (worker/workflow-start-relay.ts) starts the workflow and deletes the row.
 */
export function addWorkflowStart(batch: SqlBatch, taskQueue: string, req: WorkflowStartRequest): void {
  batch.add(INSERT_ONE, oneRow(taskQueue, req, new Date()));
}

/** `addWorkflowStart` on its own, now, in the caller's transaction (a service that writes through the ORM). */
export async function recordWorkflowStart(em: Em, taskQueue: string, req: WorkflowStartRequest): Promise<void> {
  const batch = new SqlBatch();
  addWorkflowStart(batch, taskQueue, req);
  await batch.run(em);
}

/**
 * A start the relay must not take before `at`, written now in the caller's transaction: a guard that the transaction
 * which makes it pointless deletes (`dropWorkflowStart`). Written again for the same workflow, the earlier instant
 * stands. Its `created_at` is `at` as well: the outbox's age gauge counts a start from when it is due, not from when
 * it was set aside.
 */
export async function recordWorkflowStartAt(
  em: Em,
  taskQueue: string,
  req: WorkflowStartRequest,
  at: Date,
): Promise<void> {
  await em.execute(INSERT_ONE_DUE, [...oneRow(taskQueue, req, at), at]);
}

/** Deletes the outbox row of `workflowId` in the caller's transaction (a guard made pointless); whether one was. */
export async function dropWorkflowStart(em: Em, workflowId: string): Promise<boolean> {
  const rows = await em.execute('delete from workflow_starts where workflow_id = ? returning workflow_id', [
    workflowId,
  ]);
  return rows.length > 0;
}

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

// A row a relay may claim now: due, and not leased by another relay (the claim checks it again on the locked row).
const DUE_AND_UNLEASED = 'next_attempt_at <= now() and (claimed_until is null or claimed_until < now())';

// An operation's outbox row is named by its workflow id; a fairness key is a customer id (a lowercase UUID) or ''.
// The claim tests it against UUID_RE's pattern with `~`, which is case-sensitive: the keys are written lowercase.
const OPERATION_PREFIX = operationWorkflowId('');
const UUID_PATTERN = UUID_RE.source;

// The fair claim, in one statement (decision 0072). Parameters: the queue twice, the window twice, the queue, the
// candidates per customer twice, the lease, the batch size.
// - `queue_keys`: the distinct customers (fairness keys) with rows on the queue, one index probe each (a skip scan of
//   workflow_starts_fair_index), however many rows each has queued;
// - `r.room`: how many more of the customer's operations Temporal may hold (decision 0099): the window less its
//   operations started and not yet run. The relay starts a customer's rows oldest first, so those are its oldest
//   REQUESTED operations with no unleased outbox row; only the oldest `window` of them are read
//   (operations_pending_index);
// - `candidates`: each customer's oldest due, unleased rows, ranked within the customer, read from the same index;
//   two batches' worth each (no more than its room), so a relay claiming at the same instant as another still fills
//   its batch with the rows after those the other holds locked. Rows with no task queue (null: any relay may start
//   them, so they are never left behind whatever queue claims) are one more group;
// - `due`: rank 1 of every customer first (oldest head first), then rank 2, ...: a batch takes one row per
//   customer before it takes a second from anyone, so a customer with one pending start is in the next pass
//   whatever another has queued. SKIP LOCKED below the LIMIT: two relays claiming at once take disjoint rows.
const CLAIM_FAIR = `with recursive queue_keys(fairness_key) as (
       (select fairness_key from workflow_starts where task_queue = ? order by fairness_key limit 1)
       union all
       select (select w.fairness_key from workflow_starts w
               where w.task_queue = ? and w.fairness_key > c.fairness_key order by w.fairness_key limit 1)
       from queue_keys c
       where c.fairness_key is not null
     ),
     candidates as (
       select d.workflow_id, d.rank, d.next_attempt_at, d.created_at
       from queue_keys c cross join lateral (
         select ? - count(*) as room
         from (select o.id from operations o
               where o.customer_id = case when c.fairness_key ~ '${UUID_PATTERN}' then c.fairness_key::uuid end
                 and o.status = 'REQUESTED' and o.type <> 'DEPOSIT'
               order by o.created_at limit ?) pending
         where not exists (select 1 from workflow_starts s where s.workflow_id = '${OPERATION_PREFIX}' || pending.id
                             and (s.claimed_until is null or s.claimed_until < now()))
       ) r cross join lateral (
         select w.workflow_id, w.next_attempt_at, w.created_at,
           row_number() over (order by w.next_attempt_at, w.created_at) as rank
         from (select workflow_id, next_attempt_at, created_at from workflow_starts
               where task_queue = ? and fairness_key = c.fairness_key and ${DUE_AND_UNLEASED}
               order by next_attempt_at, created_at limit greatest(0, least(?, r.room))) w
       ) d
       where c.fairness_key is not null
       union all
       select u.workflow_id, row_number() over (order by u.next_attempt_at, u.created_at), u.next_attempt_at,
         u.created_at
       from (select workflow_id, next_attempt_at, created_at from workflow_starts
             where task_queue is null and ${DUE_AND_UNLEASED}
             order by next_attempt_at, created_at limit ?) u
     )
     update workflow_starts w set claimed_until = now() + ? * interval '1 millisecond', attempts = w.attempts + 1
     from (select s.workflow_id from candidates c join workflow_starts s on s.workflow_id = c.workflow_id
           -- Checked again on the row as locked: a row another relay claimed since this statement began is out.
           where s.next_attempt_at <= now() and (s.claimed_until is null or s.claimed_until < now())
           order by c.rank, c.next_attempt_at, c.created_at limit ? for update of s skip locked) due
     where w.workflow_id = due.workflow_id
     returning w.workflow_id, w.workflow_type, w.task_queue, w.args, w.search_attributes, w.summary`;

// Prepared on each pooled connection: Postgres plans this statement of CTEs once per connection instead of on every
// pass (planning it took 0.5 ms, three times its execution).
const CLAIM_FAIR_SQL = numbered(CLAIM_FAIR);
const CLAIM_FAIR_NAME = statementName(CLAIM_FAIR_SQL);

/**
 * Claims up to `limit` rows of `taskQueue` (and of rows with no task queue, which any relay may start) that are due
 * and not leased by another relay, leasing them for `leaseMs`: round-robin across customers, oldest first within each
 * (`CLAIM_FAIR`). Within a customer rows are taken by their next attempt time, so rows that keep failing go to the
 * back of that customer's line. Two relays claiming at once take disjoint rows. With `maxStartedPerCustomer`, a
 * customer with that many operations started and not yet run has none of its rows claimed.
 */
export async function claimStarts(
  em: Em,
  taskQueue: string,
  limit: number,
  leaseMs: number,
  opts: { maxStartedPerCustomer?: number } = {},
): Promise<PendingStart[]> {
  // 0, as the configuration spells "off", is no window, as unset is.
  const window = opts.maxStartedPerCustomer || undefined;
  return rawQuery<PendingStart>(
    em,
    CLAIM_FAIR_SQL,
    [
      taskQueue,
      taskQueue,
      window ?? 2 ** 31 - 1,
      // No window: no operation is read.
      window ?? 0,
      taskQueue,
      2 * limit,
      2 * limit,
      leaseMs,
      limit,
    ],
    { prepared: CLAIM_FAIR_NAME },
  );
}

/**
 * Whether `taskQueue` has rows due and not leased, as a statement of the caller's batch: after a claim, they are rows
 * held back by the per-customer window (`claimStarts`) or left past a full batch, and the relay looks again.
 */
export function addUnclaimedStartsCheck(batch: SqlBatch, taskQueue: string): () => boolean {
  const rows = batch.add<{ waiting: boolean }>(
    `select exists (select 1 from workflow_starts
       where task_queue = ? and ${DUE_AND_UNLEASED}) as waiting`,
    [taskQueue],
  );
  return () => rows.rows[0]?.waiting === true;
}

/** Removes rows whose workflow is started, as a statement of the caller's batch. */
export function addFinishStarts(batch: SqlBatch, workflowIds: string[]): void {
  if (workflowIds.length) batch.add('delete from workflow_starts where workflow_id in (?)', [workflowIds]);
}

/** Releases rows whose start failed, each due again after its backoff, as a statement of the caller's batch. */
export function addDeferStarts(batch: SqlBatch, workflowIds: string[]): void {
  if (!workflowIds.length) return;
  batch.add(
    `update workflow_starts set claimed_until = null,
       next_attempt_at = now()
         + least(${MAX_BACKOFF_SECONDS}, 0.25 * power(2, least(attempts, 10))) * interval '1 second'
     where workflow_id in (?)`,
    [workflowIds],
  );
}

/** The row of one workflow, whatever its lease (a caller that must start it now). */
export async function pendingStart(em: Em, workflowId: string): Promise<PendingStart | undefined> {
  const rows = (await em.execute(
    'select workflow_id, workflow_type, task_queue, args, search_attributes, summary from workflow_starts ' +
      'where workflow_id = ?',
    [workflowId],
  )) as PendingStart[];
  return rows[0];
}

// The channel the outbox trigger notifies on COMMIT, with the row's task queue as payload
// (Migration20261124000000WorkflowStartWakeUp).
const CHANNEL = 'cambio_workflow_starts';

/** Subscribes a connection of the relay's own (outside the pool) to the outbox's wake-ups. */
export async function listenForStarts(client: PgClient): Promise<void> {
  await client.query(`listen ${CHANNEL}`);
}
