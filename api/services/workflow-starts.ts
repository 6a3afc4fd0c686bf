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
}

/**
 * Outbox, step 1: inside the business transaction, record that a workflow must run. If the process dies
 * after COMMIT and before the start below, the relay in the worker finds this row and starts it.
 */
export function enqueueWorkflowStart(em: Em, req: WorkflowStartRequest): void {
  em.create(WorkflowStartSchema, { ...req, createdAt: new Date() });
}

/** enqueueWorkflowStart as a statement of the caller's batch (one round trip with the business writes). */
export function addWorkflowStart(batch: SqlBatch, req: WorkflowStartRequest): void {
  batch.add('insert into workflow_starts (workflow_id, workflow_type, args, search_attributes, created_at) values (?, ?, ?::jsonb, ?::jsonb, ?)', [
    req.workflowId,
    req.workflowType,
    JSON.stringify(req.args),
    JSON.stringify(req.searchAttributes),
    new Date(),
  ]);
}

/** Outbox, step 2: start (or find) the workflow, then forget the row. Safe to run twice. */
export async function startWorkflow(temporal: Client, taskQueue: string, req: WorkflowStartRequest): Promise<void> {
  try {
    await temporal.workflow.start(req.workflowType, {
      taskQueue,
      workflowId: req.workflowId,
      args: req.args,
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

/**
 * Deletes a started workflow's outbox row. Deletes are coalesced per pool: while one runs, the rows started
 * meanwhile wait and go together in the next statement, so a busy API sends one delete per round trip instead of
 * one per operation, and an idle one deletes at once. A delete that fails or never runs is harmless: the relay
 * finds the row and starts the workflow again, which USE_EXISTING / REJECT_DUPLICATE turn into nothing.
 */
function forgetWorkflowStart(orm: Orm, workflowId: string): Promise<void> {
  let forget = forgetters.get(orm);
  if (!forget) forgetters.set(orm, (forget = coalescedDeletes(orm)));
  return forget(workflowId);
}

const forgetters = new WeakMap<Orm, (workflowId: string) => Promise<void>>();

function coalescedDeletes(orm: Orm): (workflowId: string) => Promise<void> {
  let next: { ids: string[]; done: Promise<void> } | undefined;
  let previous: Promise<unknown> = Promise.resolve();
  return (workflowId) => {
    if (!next) {
      const ids: string[] = [];
      const done = previous.then(async () => {
        if (next?.ids === ids) next = undefined; // from here on, new rows wait for the delete after this one
        await orm.em.fork().getConnection().execute('delete from workflow_starts where workflow_id in (?)', [ids]);
      });
      next = { ids, done };
      previous = done.catch(() => undefined);
    }
    next.ids.push(workflowId);
    return next.done;
  };
}

/** Outbox, step 2 and 3: start (or find) the workflow, then forget the row. Safe to repeat. */
async function startAndForget(orm: Orm, temporal: Client, taskQueue: string, req: WorkflowStartRequest): Promise<void> {
  await startWorkflow(temporal, taskQueue, req);
  await forgetWorkflowStart(orm, req.workflowId);
}

const PENDING = 'select workflow_id, workflow_type, args, search_attributes from workflow_starts';

type PendingRow = { workflow_id: string; workflow_type: string; args: unknown[]; search_attributes: Record<string, string> };

const toRequest = (row: PendingRow): WorkflowStartRequest => ({
  workflowId: row.workflow_id,
  workflowType: row.workflow_type,
  args: row.args,
  searchAttributes: row.search_attributes,
});

// Starts still running after their response went out; a graceful shutdown lets them finish before it closes the
// Temporal connection and the pool (the relay would start them anyway, but seconds later and with a warning).
const startsInFlight = new Set<Promise<boolean>>();

/** After COMMIT: start now rather than waiting for the relay. A failure here is left to the relay. */
export function startAfterCommit(orm: Orm, temporal: Client, taskQueue: string, req: WorkflowStartRequest): Promise<boolean> {
  const started = startAndForget(orm, temporal, taskQueue, req).then(
    () => true,
    () => false,
  );
  startsInFlight.add(started);
  void started.finally(() => startsInFlight.delete(started));
  return started;
}

/** After COMMIT: every start a committed transaction recorded, now (each as startAfterCommit: the relay covers a failure). */
export async function startAllAfterCommit(deps: { orm: Orm; temporal: Client; config: { taskQueue: string } }, starts: WorkflowStartRequest[]): Promise<void> {
  await Promise.all(starts.map((start) => startAfterCommit(deps.orm, deps.temporal, deps.config.taskQueue, start)));
}

/** Resolves once every start begun by startAfterCommit so far has finished (or failed over to the relay). */
export async function workflowStartsSettled(): Promise<void> {
  await Promise.all([...startsInFlight]);
}

/**
 * The relay: starts what a crash left in the outbox. Rows younger than `minAgeSeconds` belong to a live request.
 * Any number of workers run it at once: each pass claims its batch with FOR UPDATE SKIP LOCKED inside one
 * transaction, so two relays never work the same row, and deletes the rows it started before COMMIT. A relay that
 * dies mid-batch rolls back: its rows are unlocked, still there, and the next pass (of any worker) starts them
 * (a start that already happened is found by USE_EXISTING / REJECT_DUPLICATE). A row whose start fails stays for
 * the next pass without holding up the others. Returns how many workflows it started.
 */
export async function relayWorkflowStarts(orm: Orm, temporal: Client, taskQueue: string, minAgeSeconds = 5, batch = 50): Promise<number> {
  const { started, failures } = await orm.em.fork().transactional(async (tx) => {
    const rows = (await tx.execute(
      `${PENDING} where created_at < now() - make_interval(secs => ?) order by created_at limit ? for update skip locked`,
      [minAgeSeconds, batch],
    )) as PendingRow[];
    const done: string[] = [];
    const failed: unknown[] = [];
    for (const row of rows) {
      try {
        await startWorkflow(temporal, taskQueue, toRequest(row));
        done.push(row.workflow_id);
      } catch (err) {
        failed.push(err);
      }
    }
    if (done.length) await tx.execute('delete from workflow_starts where workflow_id in (?)', [done]);
    return { started: done.length, failures: failed };
  });
  if (failures.length) {
    throw new AggregateError(failures, `outbox relay: ${failures.length} workflow start(s) failed and wait for the next pass (${started} started)`);
  }
  return started;
}

/** Starts the workflow an outbox row still waits for, now. False when there is no such row. */
export async function startPendingWorkflow(orm: Orm, temporal: Client, taskQueue: string, workflowId: string): Promise<boolean> {
  const rows = (await orm.em.fork().getConnection().execute(`${PENDING} where workflow_id = ?`, [workflowId])) as PendingRow[];
  if (!rows[0]) return false;
  await startAndForget(orm, temporal, taskQueue, toRequest(rows[0]));
  return true;
}
