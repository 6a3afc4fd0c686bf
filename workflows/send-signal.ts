// The client side of a signal outbox row (db/repositories/workflow-decisions.ts): how a committed decision becomes
// a signal naming it. Shared by the writer, which sends at once after its COMMIT, and the worker's relay, which sends
// what a writer that died left behind. Not part of the workflow bundle (workflows/index.ts).
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import {
  defineSearchAttributeKey,
  SearchAttributeType,
  TypedSearchAttributes,
  WorkflowIdReusePolicy,
} from '@temporalio/common';
import type { Orm } from '../db/orm';
import { finishSignals, pendingSignal, PendingSignal } from '../db/repositories/workflow-decisions';
import { leaveUnmatchedByDecisions } from '../db/repositories/inbound-payments';
import { decisionSignal } from './decision';
import { customerPriority } from './fairness';

/** `sent`: the workflow has the signal. `closed`: it never will, its workflow has closed (or never existed). */
export type SendOutcome = 'sent' | 'closed';

/**
 * Sends the signal of one row; safe to run twice (the workflow reads each decision once). A row with a start
 * request starts its workflow if it is not running yet (signalWithStart): the one answer to "not started yet".
 * Resolves once the row is done with: delivered, or never deliverable because its workflow has closed (the
 * decision came too late and the workflow's own outcome stands; for an inbound payment, it is left UNMATCHED).
 */
export async function sendSignal(temporal: Client, row: PendingSignal): Promise<SendOutcome> {
  const signalArgs: [{ decisionId: string }] = [{ decisionId: row.decision_id }];
  try {
    if (!row.start) {
      await temporal.workflow.getHandle(row.workflow_id).signal(decisionSignal, ...signalArgs);
      return 'sent';
    }
    const { start } = row;
    await temporal.workflow.signalWithStart(start.workflowType, {
      workflowId: row.workflow_id,
      taskQueue: row.task_queue,
      args: start.args,
      signal: decisionSignal,
      signalArgs,
      staticSummary: start.summary ?? undefined,
      // A closed workflow is never run again: the outcome it reached stands.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
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

/**
 * The writer's send, right after its COMMIT: the row's signal now, then the row is done. `none`: no row was left
 * (the relay, or an earlier run, sent it).
 */
export async function sendDecisionNow(orm: Orm, temporal: Client, decisionId: string): Promise<SendOutcome | 'none'> {
  const em = orm.em.fork();
  const row = await pendingSignal(em, decisionId);
  if (!row) return 'none';
  const outcome = await sendSignal(temporal, row);
  await finishSignals(em, [decisionId]);
  if (outcome === 'closed') await leaveUnmatchedByDecisions(em, [decisionId]);
  return outcome;
}
