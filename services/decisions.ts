// The one way a decision reaches a workflow (decision 0068): the decision is a row committed in the caller's
// transaction together with its signal's outbox row (and, for an operator, the audit row); the signal, naming the row,
// goes after COMMIT; the workflow reads and validates the row before acting. Shared by the sandbox routes and the
// operator CLI for account, instruction and hold decisions and deposit replays.
import type { Em } from '../db/orm';
import type { WorkflowStartRequest } from '../db/repositories/outbox';
import {
  addDecision,
  decisionById,
  decisionsFor,
  DecisionKind,
  DecisionRow,
  lockDecisions,
  noteRequeue,
  requeueDecision,
  requeuedBy,
} from '../db/repositories/workflow-decisions';
import { CambioError } from '../domain/errors';
import { sendDecisionNow } from '../workflows/send-signal';
import type { ServiceContext } from './context';

type DecisionServices = Pick<ServiceContext, 'orm' | 'temporal' | 'config'>;

export interface DecisionRequest {
  kind: DecisionKind;
  workflowId: string;
  customerId: string;
  decision: 'APPROVE' | 'REJECT' | null;
  reason?: string;
  /** The workflow to start first when the decision may come before its start was relayed (signalWithStart). */
  start?: WorkflowStartRequest;
}

/**
 * Records decision `id` about `target` in `tx`. `check` reads the target's state (throwing when it cannot be
 * decided) and says what to record. Running it again with the same id finds the first run's row and records
 * nothing: the retry of a request that died after its COMMIT. A review or hold takes one decision; a second is
 * 409 INVALID_STATE, so it is never recorded only to be ignored. Returns the id of the decision whose signal the
 * caller sends after COMMIT: `id`, or the one recorded before when it is taken again on a review that is still
 * undecided and whose workflow may run again (decision 0317).
 */
export async function recordDecision(
  s: Pick<DecisionServices, 'config'>,
  tx: Em,
  id: string,
  target: string,
  actor: string,
  check: () => Promise<DecisionRequest>,
): Promise<string> {
  // The lock's key is text: one spelling per target, or two callers spelling it differently would both record.
  await lockDecisions(tx, target.toLowerCase());
  if (await decisionById(tx, id)) return id;
  // The same request run again after it took an earlier decision again: that one, sent again (decision 0345).
  const requeued = await requeuedBy(tx, id);
  if (requeued) return requeued;
  const req = await check();
  const [recorded] = req.kind === 'DEPOSIT_REPLAY' ? [] : await decisionsFor(tx, req.workflowId, req.kind);
  if (recorded && req.start?.rerunIfStopped && recorded.decision === req.decision) {
    // The target is still undecided (`check` passed) though the decision was recorded: its signal may have been
    // dropped by a workflow closed by hand before its start went with it (decision 0315). The same decision again
    // sends that one again, with the start: a running workflow reads each decision once, a stopped one runs again
    // to take it, a completed one is never run again (decision 0317). Nothing new is recorded.
    await requeueDecision(tx, recorded, { taskQueue: s.config.taskQueue, start: req.start });
    await noteRequeue(tx, id, recorded.id);
    return recorded.id;
  }
  if (recorded) {
    // Which one, so that the reviewer who lost a race knows whether the outcome is theirs; not who took it (the
    // sandbox route answers customers, who do not learn operators' names).
    const message = `a decision is already recorded for this review (${recorded.decision}); it is being applied`;
    throw new CambioError('INVALID_STATE', message, { status: 'DECIDED', decision: recorded.decision });
  }
  const row: DecisionRow = {
    id,
    workflowId: req.workflowId,
    kind: req.kind,
    customerId: req.customerId,
    target,
    decision: req.decision,
    reason: req.reason ?? null,
    actor,
  };
  await addDecision(tx, row, { taskQueue: s.config.taskQueue, start: req.start });
  return id;
}

// One send's bound, as the relay's (worker/workflow-signal-relay.ts): Temporal cut under a sender (packets dropped, a
// frozen frontend) would otherwise hold it for minutes of the client's keepalives and retries.
export const SEND_DEADLINE_MS = 5_000;

/**
 * After COMMIT: the signal naming decision `id`, now, within SEND_DEADLINE_MS. If this process dies first, or the send
 * fails (DEADLINE_EXCEEDED: the caller's 503), the worker's outbox relay sends it; if both send, the workflow reads
 * the decision once.
 */
export async function sendDecision(s: DecisionServices, id: string): Promise<void> {
  await s.temporal.withDeadline(Date.now() + SEND_DEADLINE_MS, () => sendDecisionNow(s.orm, s.temporal, id));
}
