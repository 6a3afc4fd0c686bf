// Workflow decisions and their signal outbox (tables `workflow_decisions`, `workflow_signals`): hand-written
// statements through the caller's EntityManager (em.execute). Tenant: a decision is written inside a transaction
// that already found its target in the customer's scope and carries that customer's id; the reads by id are the
// workflow's and the relay's, which act for every customer (each row names the one workflow it is for).
import type { Em } from '../orm';
import type { SqlBatch } from '../batch';
import type { WorkflowStartRequest } from './outbox';
import { lockUntilTransactionEnds } from '../transaction-lock';

export type DecisionKind = 'ACCOUNT_REVIEW' | 'INSTRUCTION_REVIEW' | 'HOLD' | 'DEPOSIT_REPLAY' | 'INBOUND_PAYMENT';

export interface DecisionRow {
  id: string;
  workflowId: string;
  kind: DecisionKind;
  customerId: string;
  /** What is decided: the account, instruction or operation; for INBOUND_PAYMENT, the payment to decide. */
  target: string;
  /** APPROVE or REJECT; none for a replay or an inbound payment. */
  decision: 'APPROVE' | 'REJECT' | null;
  reason: string | null;
  /** `operator:<name>` (CLI), `customer:<id>` (sandbox route), `rail:<rail>` (a rail's report), `system:sweep`. */
  actor: string;
}

export interface PendingSignal {
  decision_id: string;
  workflow_id: string;
  task_queue: string;
  start: WorkflowStartRequest | null;
}

/**
 * Records a decision and its signal in the caller's transaction. Running it again with the same id (the retry of
 * a request that died after its COMMIT) writes nothing: the decision id is fixed by the request.
 * `start`: the workflow to start first if it is not running yet (its own outbox row may not have been relayed).
 */
export async function addDecision(
  em: Em,
  row: DecisionRow,
  signal: { taskQueue: string; start?: WorkflowStartRequest },
): Promise<void> {
  await em.execute(
    `with d as (
       insert into workflow_decisions (id, workflow_id, kind, customer_id, target, decision, reason, actor, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, now()) on conflict (id) do nothing returning id, workflow_id)
     insert into workflow_signals (decision_id, workflow_id, task_queue, start, created_at)
     select id, workflow_id, ?, ?::jsonb, now() from d`,
    [
      row.id,
      row.workflowId,
      row.kind,
      row.customerId,
      row.target,
      row.decision,
      row.reason,
      row.actor,
      signal.taskQueue,
      signal.start ? JSON.stringify(signal.start) : null,
    ],
  );
}

/**
 * Records a decision if it is not recorded yet and queues its signal again if none is queued: for a decision whose
 * signal may have been lost to a workflow that was not reachable then (an inbound payment the sweep finds still
 * RECEIVED, or recorded before payments were decisions). Two statements in the caller's transaction.
 */
export async function requeueDecision(
  em: Em,
  row: DecisionRow,
  signal: { taskQueue: string; start?: WorkflowStartRequest },
): Promise<void> {
  await em.execute(
    `insert into workflow_decisions (id, workflow_id, kind, customer_id, target, decision, reason, actor, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, now()) on conflict (id) do nothing`,
    [row.id, row.workflowId, row.kind, row.customerId, row.target, row.decision, row.reason, row.actor],
  );
  await em.execute(
    `insert into workflow_signals (decision_id, workflow_id, task_queue, start, created_at)
     select id, workflow_id, ?, ?::jsonb, now() from workflow_decisions where id = ?
     on conflict (decision_id) do nothing`,
    [signal.taskQueue, signal.start ? JSON.stringify(signal.start) : null, row.id],
  );
}

/**
 * Notes, in the caller's transaction, that the request whose decision id is `requestId` took decision `decisionId`
 * again (recorded before, decision 0317) instead of recording its own: the same request run again finds it.
 */
export async function noteRequeue(em: Em, requestId: string, decisionId: string): Promise<void> {
  await em.execute(
    `insert into workflow_decision_requeues (request_id, decision_id) values (?, ?)
     on conflict (request_id) do nothing`,
    [requestId, decisionId],
  );
}

/** The decision the request `requestId` took again, if it did (`noteRequeue`). */
export async function requeuedBy(em: Em, requestId: string): Promise<string | undefined> {
  const [row] = await em.execute(`select decision_id from workflow_decision_requeues where request_id = ?`, [
    requestId,
  ]);
  return row ? String(row.decision_id) : undefined;
}

const COLUMNS = 'id, workflow_id, kind, customer_id, target, decision, reason, actor';

const toDecision = (r: Record<string, unknown>): DecisionRow => ({
  id: r.id as string,
  workflowId: r.workflow_id as string,
  kind: r.kind as DecisionKind,
  customerId: r.customer_id as string,
  target: r.target as string,
  decision: (r.decision as DecisionRow['decision']) ?? null,
  reason: (r.reason as string | null) ?? null,
  actor: r.actor as string,
});

/** One decision by id, across customers (the workflow that reads it validates what it is for). */
export async function decisionById(em: Em, id: string): Promise<DecisionRow | undefined> {
  const [row] = await em.execute(`select ${COLUMNS} from workflow_decisions where id = ?`, [id]);
  return row ? toDecision(row) : undefined;
}

/** The decisions recorded for a workflow of `kind`, oldest first (a review takes one; replays are many). */
export async function decisionsFor(em: Em, workflowId: string, kind: DecisionKind): Promise<DecisionRow[]> {
  const rows = await em.execute(
    `select ${COLUMNS} from workflow_decisions where workflow_id = ? and kind = ? order by created_at, id`,
    [workflowId, kind],
  );
  return rows.map(toDecision);
}

// Same backoff as the outbox of starts (db/repositories/outbox.ts): a signal Temporal refused waits 0.5 s, 1 s, ...
// up to 10 s, and goes to the back of the line.
const MAX_BACKOFF_SECONDS = 10;

const CLAIM_SIGNALS = `update workflow_signals s
     set claimed_until = now() + ? * interval '1 millisecond', attempts = s.attempts + 1
     from (select decision_id from workflow_signals
           where task_queue = ? and next_attempt_at <= now() and (claimed_until is null or claimed_until < now())
           order by next_attempt_at, created_at limit ? for update skip locked) due
     where s.decision_id = due.decision_id
     returning s.decision_id, s.workflow_id, s.task_queue, s.start`;

/**
 * Claims up to `limit` due signal rows of `taskQueue`, leased for `leaseMs` (SKIP LOCKED: relays never share one), as
 * a statement of the caller's batch: the relay sends it with its starts' bookkeeping, one message for both.
 */
export function addClaimSignals(batch: SqlBatch, taskQueue: string, limit: number, leaseMs: number) {
  return batch.add<PendingSignal>(CLAIM_SIGNALS, [leaseMs, taskQueue, limit]);
}

/**
 * Claims the signal row of one decision for its writer, which sends it at once after its COMMIT. `held`: the relay
 * holds it (its LISTEN wakes it on the same COMMIT) and sends it: one of them sends, not both. `gone`: no row.
 */
export async function claimSignal(
  em: Em,
  decisionId: string,
  leaseMs: number,
): Promise<PendingSignal | 'held' | 'gone'> {
  const [row] = (await em.execute(
    `with claimed as (
       update workflow_signals set claimed_until = now() + ? * interval '1 millisecond'
       where decision_id = ? and (claimed_until is null or claimed_until < now())
       returning decision_id, workflow_id, task_queue, start)
     select c.*, (c.decision_id is null and exists (select 1 from workflow_signals where decision_id = ?)) as held
     from (select 1) one left join claimed c on true`,
    [leaseMs, decisionId, decisionId],
  )) as Array<PendingSignal & { held: boolean }>;
  if (row.decision_id)
    return { decision_id: row.decision_id, workflow_id: row.workflow_id, task_queue: row.task_queue, start: row.start };
  return row.held ? 'held' : 'gone';
}

/** Removes the rows whose signal was delivered (or can never be: the workflow is gone). */
export async function finishSignals(em: Em, decisionIds: string[]): Promise<void> {
  if (decisionIds.length) await em.execute('delete from workflow_signals where decision_id in (?)', [decisionIds]);
}

/** Releases rows whose signal failed, each due again after its backoff. */
export async function deferSignals(em: Em, decisionIds: string[]): Promise<void> {
  if (!decisionIds.length) return;
  await em.execute(
    `update workflow_signals set claimed_until = null,
       next_attempt_at = now()
         + least(${MAX_BACKOFF_SECONDS}, 0.25 * power(2, least(attempts, 10))) * interval '1 second'
     where decision_id in (?)`,
    [decisionIds],
  );
}

/**
 * Whether `paymentId` is a payment recorded for deposit `operationId`: what the legacy `inboundPayment` signal must
 * name to count (a deposit on the signal path). Across customers, like the workflow that asks.
 */
export async function paymentRecordedFor(em: Em, operationId: string, paymentId: string): Promise<boolean> {
  const rows = await em.execute('select 1 from inbound_payments where id = ? and operation_id = ?', [
    paymentId,
    operationId,
  ]);
  return rows.length > 0;
}

/**
 * Serializes the decisions of one target (account, instruction, operation) until the caller's transaction ends:
 * two reviewers deciding at once record one decision, and the second is told it was decided.
 */
export async function lockDecisions(em: Em, target: string): Promise<void> {
  await lockUntilTransactionEnds(em, `cambio:decision:${target}`);
}
