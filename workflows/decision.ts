// How a decision reaches a workflow (decision 0068): the signal names a row committed before it was sent, and the
// workflow reads and validates that row (`readDecision`) before acting. A signal sent by hand, with a made-up decision
// or naming no row of this workflow, changes nothing: it is logged and listed by the `ignoredSignals` query.
import * as wf from '@temporalio/workflow';
import type { DecisionActivities } from '../activities/decisions';
import { DECISION_SIGNAL, type DecisionRef } from './decision-signal';
import { SCHEDULED_STEP, STEP_IN_WORKFLOW_TASK } from './operations/database-steps';

export interface IgnoredSignal {
  signal: string;
  why: string;
  decisionId?: string;
}

export const decisionSignal = wf.defineSignal<[DecisionRef]>(DECISION_SIGNAL);
export const ignoredSignalsQuery = wf.defineQuery<IgnoredSignal[]>('ignoredSignals');

// A decision's read is one short read-only query: a retry is harmless, so it runs inside the workflow task that
// takes the signal, as a local activity, and what the decision leads to (a deposit's own steps) follows in that same
// task. Decisions read before this were scheduled activities, each a trip through the server and a second workflow
// task: their histories replay so (decision 0151). Both with the timeout and retries of every database step.
const scheduled = wf.proxyActivities<DecisionActivities>(SCHEDULED_STEP);
const inWorkflowTask = wf.proxyLocalActivities<DecisionActivities>(STEP_IN_WORKFLOW_TASK);
const DECISIONS_READ_IN_TASK = 'decisions-read-in-workflow-task';

/** What a workflow keeps of the signals it ignored, and the query that shows them. */
export function ignoredSignals(): (signal: string, why: string, decisionId?: string) => void {
  const ignored: IgnoredSignal[] = [];
  wf.setHandler(ignoredSignalsQuery, () => ignored);
  return (signal, why, decisionId) => {
    wf.log.warn('ignoring a signal that names no recorded decision of this workflow', {
      signal,
      why,
      ...(decisionId ? { decisionId } : {}),
    });
    // Bounded: a flood of hand-made signals must not grow the workflow's state without end.
    if (ignored.length < 100) ignored.push({ signal, why, ...(decisionId ? { decisionId } : {}) });
  };
}

type Kind = Parameters<DecisionActivities['readDecision']>[0]['kind'];
type Found = NonNullable<Awaited<ReturnType<DecisionActivities['readDecision']>>>;

/**
 * Handles `decisionSignal` for decisions of `kind` (one, or several: a deposit takes its replays and the payments it
 * decides): each id is read once, and `apply` gets the recorded decision only if the row exists and is for this very
 * workflow and one of its kinds. The handler waits for what `apply` returns, so `allHandlersFinished` covers it.
 */
export function onDecisions(
  kind: Kind,
  ignore: ReturnType<typeof ignoredSignals>,
  apply: (d: Found) => void | Promise<void>,
): { reading: () => number } {
  const seen = new Set<string>();
  const kinds = Array.isArray(kind) ? kind.join(' or ') : kind;
  // Signals taken whose rows are still being read: `apply` has not been called for them yet.
  let reading = 0;
  wf.setHandler(decisionSignal, async (ref) => {
    const decisionId = typeof ref?.decisionId === 'string' ? ref.decisionId : '';
    if (seen.has(decisionId)) return;
    seen.add(decisionId);
    // Asked per signal, not at the start: a workflow that never takes a decision (a transfer) records no marker, and
    // one started before this reads its later decisions inside the task too.
    const read = wf.patched(DECISIONS_READ_IN_TASK) ? inWorkflowTask : scheduled;
    reading++;
    let found: Found | null;
    try {
      found = await read.readDecision({ decisionId, workflowId: wf.workflowInfo().workflowId, kind });
    } finally {
      reading--;
    }
    if (!found)
      return ignore('decision', `no ${kinds} decision ${decisionId || '(none)'} is recorded for it`, decisionId);
    const applying = apply(found);
    if (applying) await applying;
  });
  return { reading: () => reading };
}
