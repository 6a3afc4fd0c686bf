// Operator (and sandbox) decisions on an operation's workflow: a held withdrawal's review and a failed deposit's
// replay. Each is a decision row committed first and a signal naming it after COMMIT (services/decisions.ts).
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Em } from '../../db/orm';
import type { Operation } from '../../db/entities';
import { CambioError } from '../../domain/errors';
import { checkReason, currentState, MAX_DECISION_REASON_LENGTH } from '../../domain/states';
import { inTransaction } from '../../db/transaction';
import type { WorkflowStartRequest } from '../../db/repositories/outbox';
import { operationSummary } from '../../domain/summaries';
import { operationWorkflowId } from '../../workflows/ids';
import type { HoldDecision } from '../../workflows/operation';
import { pollUntil } from '../poll';
import type { ServiceContext } from '../context';
import { recordDecision, SEND_DEADLINE_MS, sendDecision } from '../decisions';
import { loadOperation as load } from './read';

// The repository's read sees past the identity map.
const waitFor = (em: Em, id: string, done: (op: Operation) => boolean) =>
  pollUntil(() => load(em, id), done, { intervalMs: 50 });

const invalidState = (op: Operation, wanted: string) =>
  new CambioError('INVALID_STATE', `operation is ${op.type} in ${op.status}; this needs ${wanted}`, {
    status: op.status,
    type: op.type,
  });

const replayable = (op: Operation) =>
  op.type === 'DEPOSIT' && op.status === 'FAILED' && currentState(op.states).reason?.code !== 'DEPOSIT_EXPIRED';

/** Operator: re-run a failed deposit's reconciliation over every payment recorded so far. */
export async function replayDeposit(s: ServiceContext, em: Em, operationId: string, actor: string) {
  const op = await load(em, operationId);
  if (!replayable(op)) throw invalidState(op, 'a DEPOSIT whose reconciliation FAILED');
  // A FAILED reconciliation ran in the workflow, so it started: gone now means its replay window closed. Asked
  // before recording, so a replay that cannot run is refused rather than recorded.
  const describe = () => s.temporal.workflow.getHandle(operationWorkflowId(op.id)).describe();
  const running = await s.temporal.withDeadline(Date.now() + SEND_DEADLINE_MS, describe).then(
    (d) => d.status.name === 'RUNNING',
    (err: unknown) => (err instanceof WorkflowNotFoundError ? false : Promise.reject(err)),
  );
  if (!running) {
    throw new CambioError('INVALID_STATE', 'the replay window of this deposit has closed', {
      status: op.status,
      type: op.type,
    });
  }
  const before = op.updatedAt.getTime();
  const decisionId = randomUUID();
  await inTransaction(em, (tx) =>
    recordDecision(s, tx, decisionId, operationId, actor, async () => {
      const locked = await load(tx, operationId);
      if (!replayable(locked)) throw invalidState(locked, 'a DEPOSIT whose reconciliation FAILED');
      const workflowId = operationWorkflowId(locked.id);
      return { kind: 'DEPOSIT_REPLAY', workflowId, customerId: locked.customerId, decision: null };
    }),
  );
  await sendDecision(s, decisionId);
  return waitFor(em, operationId, (o) => o.status === 'COMPLETED' || o.updatedAt.getTime() > before);
}

/**
 * Records a decision on a withdrawal ON_HOLD (else 409 INVALID_STATE) in `tx`, for its workflow to read; the id of the
 * decision to send (services/decisions.ts: the one recorded before, when this one takes it again).
 */
export async function recordHoldDecision(
  s: Pick<ServiceContext, 'config'>,
  tx: Em,
  operationId: string,
  decision: HoldDecision,
  who: { decisionId: string; actor: string },
): Promise<string> {
  checkReason(decision.reason, MAX_DECISION_REASON_LENGTH);
  return recordDecision(s, tx, who.decisionId, operationId, who.actor, async () => {
    const op = await load(tx, operationId);
    if (op.type !== 'WITHDRAWAL' || op.status !== 'ON_HOLD') throw invalidState(op, 'a WITHDRAWAL ON_HOLD');
    return {
      kind: 'HOLD',
      // The stored id, never the caller's spelling of it: a workflow id is text, and compared as text.
      workflowId: operationWorkflowId(op.id),
      customerId: op.customerId,
      decision: decision.decision,
      reason: decision.reason,
      start: heldWithdrawalStart(op),
    };
  });
}

/**
 * The workflow of a held withdrawal as its creation started it (services/operations/create.ts): what the decision's
 * signal starts again if an operator closed it by hand while it waited (decision 0315). The new run finds the
 * withdrawal ON_HOLD (or stops if it is not: workflows/operations/withdrawal.ts), and takes this decision.
 */
const heldWithdrawalStart = (op: Operation): WorkflowStartRequest => ({
  workflowId: operationWorkflowId(op.id),
  workflowType: 'operationWorkflow',
  args: [{ operationId: op.id, type: 'WITHDRAWAL', requiresReview: true }],
  searchAttributes: { CustomerId: op.customerId, OperationType: 'WITHDRAWAL', OperationStatus: 'ON_HOLD' },
  summary: operationSummary(op),
  rerunIfStopped: true,
});

/** After COMMIT: the signal naming the decision, then the wait until the withdrawal left ON_HOLD. */
export async function applyHoldDecision(
  s: Pick<ServiceContext, 'orm' | 'temporal' | 'config'>,
  em: Em,
  operationId: string,
  decisionId: string,
): Promise<void> {
  await sendDecision(s, decisionId);
  await waitFor(em, operationId, (o) => o.status === 'COMPLETED' || o.status === 'FAILED');
}

/** Operator: approve or reject a withdrawal held for review. */
export async function decideHold(
  s: ServiceContext,
  em: Em,
  operationId: string,
  decision: HoldDecision,
  actor: string,
) {
  const who = { decisionId: randomUUID(), actor };
  const decisionId = await inTransaction(em, (tx) => recordHoldDecision(s, tx, operationId, decision, who));
  await applyHoldDecision(s, em, operationId, decisionId);
  return load(em, operationId);
}
