import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { SearchAttributeType, TypedSearchAttributes, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { defineSearchAttributeKey } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Em, Orm } from '../../db/orm';
import { WorkflowStartSchema } from '../../db/entities';
import type { SqlBatch } from '../../db/batch';

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

const PENDING = 'select workflow_id, workflow_type, task_queue, args, search_attributes, summary from workflow_starts';

type PendingRow = { workflow_id: string; workflow_type: string; task_queue: string | null; args: unknown[]; search_attributes: Record<string, string>; summary: string | null };

const toRequest = (row: PendingRow): WorkflowStartRequest => ({
  workflowId: row.workflow_id,
  workflowType: row.workflow_type,
  args: row.args,
  searchAttributes: row.search_attributes,
  summary: row.summary,
});

/** How many rows one relay pass claims at most. */
export const RELAY_BATCH = 50;

/**
 * One pass of the relay of `taskQueue` (and of rows from before task queues were recorded). Any number of workers
 * run it at once: a pass claims its rows with FOR UPDATE SKIP LOCKED inside one transaction, so two relays never
 * work the same row, starts them together, and deletes the ones it started before COMMIT. A relay that dies
 * mid-pass rolls back: its rows are unlocked, still there, and the next pass (of any worker) starts them (a start
 * that already happened is found by USE_EXISTING / REJECT_DUPLICATE). A row whose start fails stays for a later
 * pass without holding up the others, which are committed before the failure is thrown. Returns how many rows it
 * claimed.
 */
export async function relayWorkflowStarts(orm: Orm, temporal: Client, taskQueue: string, opts: { eager?: boolean; batch?: number } = {}): Promise<number> {
  const { claimed, failures } = await orm.em.fork().transactional(async (tx) => {
    const rows = (await tx.execute(
      `${PENDING} where task_queue = ? or task_queue is null order by created_at limit ? for update skip locked`,
      [taskQueue, opts.batch ?? RELAY_BATCH],
    )) as PendingRow[];
    const results = await Promise.allSettled(rows.map((row) => startWorkflow(temporal, taskQueue, toRequest(row), { eager: opts.eager })));
    const done = rows.filter((_, i) => results[i].status === 'fulfilled').map((row) => row.workflow_id);
    if (done.length) await tx.execute('delete from workflow_starts where workflow_id in (?)', [done]);
    return { claimed: rows.length, failures: results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : [])) };
  });
  if (failures.length) {
    throw new AggregateError(failures, `outbox relay: ${failures.length} of ${claimed} workflow start(s) failed and wait for a later pass`);
  }
  return claimed;
}

/**
 * Starts the workflow an outbox row still waits for, now, on the row's task queue: for a caller that cannot wait
 * for the relay (a signal to a workflow that must exist). False when there is no such row.
 */
export async function startPendingWorkflow(orm: Orm, temporal: Client, taskQueue: string, workflowId: string): Promise<boolean> {
  const em = orm.em.fork();
  const rows = (await em.getConnection().execute(`${PENDING} where workflow_id = ?`, [workflowId])) as PendingRow[];
  if (!rows[0]) return false;
  await startWorkflow(temporal, rows[0].task_queue ?? taskQueue, toRequest(rows[0]));
  await em.getConnection().execute('delete from workflow_starts where workflow_id = ?', [workflowId]);
  return true;
}
