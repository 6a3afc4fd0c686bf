// The client side of a signal outbox row (db/repositories/workflow-decisions.ts): how a committed decision becomes
// a signal naming it. Shared by the writer, which sends at once after its COMMIT, and the worker's relay, which sends
// what a writer that died left behind. Not part of the workflow bundle (workflows/index.ts): it names the signal
// through workflows/decision-signal.ts, never the workflow code that takes it.
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import {
  defineSearchAttributeKey,
  SearchAttributeType,
  TypedSearchAttributes,
  WorkflowIdReusePolicy,
  type Workflow,
} from '@temporalio/common';
import type { Orm } from '../db/orm';
import { claimSignal, deferSignals, finishSignals, PendingSignal } from '../db/repositories/workflow-decisions';
import { leaveUnmatchedByDecisions } from '../db/repositories/inbound-payments';
import { DECISION_SIGNAL, type DecisionRef } from './decision-signal';
import { customerPriority } from './fairness';
import { clampSummary } from '../domain/summaries';

/** `sent`: the workflow has the signal. `closed`: it never will, its workflow has closed (or never existed). */
export type SendOutcome = 'sent' | 'closed';

/**
 * Sends the signal of one row; safe to run twice (the workflow reads each decision once). A row with a start
 * request starts its workflow if it is not running yet (signalWithStart): the one answer to "not started yet".
 * Resolves once the row is done with: delivered, or never deliverable because its workflow has closed (the
 * decision came too late and the workflow's own outcome stands; for an inbound payment, it is left UNMATCHED). A
 * start marked `rerunIfStopped` runs its workflow again if it was closed without completing (decision 0315).
 */
export async function sendSignal(temporal: Client, row: PendingSignal): Promise<SendOutcome> {
  const signalArgs: [DecisionRef] = [{ decisionId: row.decision_id }];
  try {
    if (!row.start) {
      await temporal.workflow.getHandle(row.workflow_id).signal<[DecisionRef]>(DECISION_SIGNAL, ...signalArgs);
      return 'sent';
    }
    const { start } = row;
    await temporal.workflow.signalWithStart<Workflow, [DecisionRef]>(start.workflowType, {
      workflowId: row.workflow_id,
      taskQueue: row.task_queue,
      args: start.args,
      signal: DECISION_SIGNAL,
      signalArgs,
      staticSummary: start.summary ? clampSummary(start.summary) : undefined,
      // A workflow that completed is never run again: the outcome it reached stands. A review's may run again if it
      // was closed by hand before it took a decision, or the decision would never be applied (decision 0315): its
      // target is still undecided (the decision was recorded only so), and the new run applies the decision once.
      workflowIdReusePolicy: start.rerunIfStopped
        ? WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY
        : WorkflowIdReusePolicy.REJECT_DUPLICATE,
      priority: customerPriority(start.searchAttributes.CustomerId),
      typedSearchAttributes: new TypedSearchAttributes(
        Object.entries(start.searchAttributes).map(([name, value]) => ({
          key: defineSearchAttributeKey(name, SearchAttributeType.KEYWORD),
          value,
        })),
      ),
    });
    return 'sent';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || err instanceof WorkflowExecutionAlreadyStartedError) return 'closed';
    throw err;
  }
}

// The writer's claim on its row: the relay's lease, long enough for one send (which has its own deadline).
const WRITER_LEASE_MS = 15_000;

/**
 * The writer's send, right after its COMMIT: the row's signal now, then the row is done. `held`: the relay is sending
 * it; `none`: no row is left (the relay, or an earlier run, sent it). A writer that dies holding its claim leaves
 * the row to the relay once the lease ends.
 */
export async function sendDecisionNow(
  orm: Orm,
  temporal: Client,
  decisionId: string,
): Promise<SendOutcome | 'none' | 'held'> {
  const em = orm.em.fork();
  const row = await claimSignal(em, decisionId, WRITER_LEASE_MS);
  if (row === 'held') return 'held';
  if (row === 'gone') return 'none';
  let outcome: SendOutcome;
  try {
    outcome = await sendSignal(temporal, row);
  } catch (err) {
    // Back to the relay at once (its first back-off), not after this writer's lease.
    await deferSignals(em, [decisionId]).catch(() => undefined);
    throw err;
  }
  await finishSignals(em, [decisionId]);
  if (outcome === 'closed') await leaveUnmatchedByDecisions(em, [decisionId]);
  return outcome;
}
