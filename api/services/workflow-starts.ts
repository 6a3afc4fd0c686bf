import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { SearchAttributeType, TypedSearchAttributes, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { defineSearchAttributeKey } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Em, Orm } from '../../db/orm';
import { WorkflowStartSchema } from '../../db/entities';
import type { SqlBatch } from '../../db/batch';
import { claimStarts, deferStarts, finishStarts, pendingStart, PendingStart } from '../../db/repositories/workflow-starts';

export interface WorkflowStartRequest {
  workflowId: string;
  workflowType: string;
  args: unknown[];
  /** Keyword search attributes by name (CustomerId, OperationType, OperationStatus). */
  searchAttributes: Record<string, string>;
  /** One line for the Temporal UI's list (`staticSummary`), e.g. `DEPOSIT 100.00 BRL via PIX_KEY to Acme Ltda`. */
  summary?: string | null;
}

/**
 * The outbox: inside the business transaction, record that a workflow must run on `taskQueue`. Its COMMIT wakes
 * the relay of that queue's workers (a trigger, Migration20261124000000WorkflowStartWakeUp), which starts the
 * workflow and deletes the row (worker/workflow-start-relay.ts). Nothing is started from the writer: a process
 * that dies right after COMMIT has nothing left to do.
 */
export function enqueueWorkflowStart(em: Em, taskQueue: string, req: WorkflowStartRequest): void {
  em.create(WorkflowStartSchema, { ...req, taskQueue, createdAt: new Date() });
}

/** enqueueWorkflowStart as a statement of the caller's batch (one round trip with the business writes). */
export function addWorkflowStart(batch: SqlBatch, taskQueue: string, req: WorkflowStartRequest): void {
  batch.add('insert into workflow_starts (workflow_id, workflow_type, task_queue, args, search_attributes, summary, created_at) values (?, ?, ?, ?::jsonb, ?::jsonb, ?, ?)', [
    req.workflowId,
    req.workflowType,
    taskQueue,
    JSON.stringify(req.args),
    JSON.stringify(req.searchAttributes),
    req.summary ?? null,
    new Date(),
  ]);
}

/**
 * Starts (or finds) the workflow of an outbox row. Safe to run twice. `eager` asks the server to hand the
 * workflow's first task straight back to a worker in this process (the client must share that worker's native
 * connection): no trip through the task queue for it.
 */
export async function startWorkflow(temporal: Client, taskQueue: string, req: WorkflowStartRequest, opts: { eager?: boolean } = {}): Promise<void> {
  try {
    await temporal.workflow.start(req.workflowType, {
      taskQueue,
      workflowId: req.workflowId,
      args: req.args,
      requestEagerStart: opts.eager,
      staticSummary: req.summary ?? undefined,
      // Running already: that is the one. Closed already: never run the business twice.
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      typedSearchAttributes: new TypedSearchAttributes(
        Object.entries(req.searchAttributes).map(([name, value]) => ({
          key: defineSearchAttributeKey(name, SearchAttributeType.KEYWORD),
          value,
        })),
      ),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

const toRequest = (row: PendingStart): WorkflowStartRequest => ({
  workflowId: row.workflow_id,
  workflowType: row.workflow_type,
  args: row.args,
  searchAttributes: row.search_attributes,
  summary: row.summary,
});

/** How many rows one relay pass claims at most. */
export const RELAY_BATCH = 50;

// A pass's starts must end well within its lease, or another relay could claim the same rows while they run
// (harmless, the starts are idempotent, but wasted): each start gets START_DEADLINE_MS, the lease three times that.
const START_DEADLINE_MS = 5_000;
export const RELAY_LEASE_MS = 15_000;

/**
 * One pass of the relay of `taskQueue` (and of rows from before task queues were recorded). Any number of workers
 * run it at once. It claims rows with a lease in one short statement (SKIP LOCKED: two relays never claim the same
 * row), starts them with no transaction open, then deletes the started rows and defers the failed ones (backoff per
 * row, to the back of the line) in two more short statements. A relay that dies mid-pass leaves its rows leased:
 * they are claimed again once the lease runs out (a start that already happened is found by USE_EXISTING /
 * REJECT_DUPLICATE). Returns how many rows it claimed; throws after the bookkeeping when some starts failed.
 */
export async function relayWorkflowStarts(
  orm: Orm,
  temporal: Client,
  taskQueue: string,
  opts: { eager?: boolean; batch?: number; leaseMs?: number } = {},
): Promise<number> {
  const em = orm.em.fork();
  const rows = await claimStarts(em, taskQueue, opts.batch ?? RELAY_BATCH, opts.leaseMs ?? RELAY_LEASE_MS);
  if (!rows.length) return 0;
  const results = await Promise.allSettled(
    rows.map((row) => temporal.withDeadline(Date.now() + START_DEADLINE_MS, () => startWorkflow(temporal, taskQueue, toRequest(row), { eager: opts.eager }))),
  );
  const started = rows.filter((_, i) => results[i].status === 'fulfilled').map((row) => row.workflow_id);
  const failed = rows.filter((_, i) => results[i].status === 'rejected').map((row) => row.workflow_id);
  await Promise.all([finishStarts(em.fork(), started), deferStarts(em.fork(), failed)]);
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
  if (failures.length) {
    throw new AggregateError(failures, `outbox relay: ${failures.length} of ${rows.length} workflow start(s) failed and wait for a later pass`);
  }
  return rows.length;
}

/**
 * Starts the workflow an outbox row still waits for, now, on the row's task queue: for a caller that cannot wait
 * for the relay (a signal to a workflow that must exist). False when there is no such row.
 */
export async function startPendingWorkflow(orm: Orm, temporal: Client, taskQueue: string, workflowId: string): Promise<boolean> {
  const em = orm.em.fork();
  const row = await pendingStart(em, workflowId);
  if (!row) return false;
  await startWorkflow(temporal, row.task_queue ?? taskQueue, toRequest(row));
  await finishStarts(em, [workflowId]);
  return true;
}
