import { WorkflowNotFoundError } from '@temporalio/client';
import type { Em } from '../../../db/orm';
import type { Operation } from '../../../db/entities';
import { CambioError } from '../../../domain/errors';
import { currentState } from '../../../domain/states';
import { operationWorkflowId } from '../../../workflows/ids';
import { holdDecisionSignal, HoldDecision, replaySignal } from '../../../workflows/operation';
import { pollUntil } from '../poll';
import type { ServiceContext } from '../context';
import { loadOperation as load } from './read';
import { presentOperation } from '../../presenters/operation';

// The repository's read sees past the identity map, on the caller's connection inside its transaction.
const waitFor = (em: Em, id: string, done: (op: Operation) => boolean) =>
  pollUntil(() => load(em, id), done, { intervalMs: 50 });

const invalidState = (op: Operation, wanted: string) =>
  new CambioError('INVALID_STATE', `operation is ${op.type} in ${op.status}; this needs ${wanted}`, {
    status: op.status,
    type: op.type,
  });

/** Operator: re-run a failed deposit's reconciliation over every payment recorded so far. */
export async function replayDeposit(s: ServiceContext, em: Em, operationId: string) {
  const op = await load(em, operationId);
  const reason = currentState(op.states).reason?.code;
  if (op.type !== 'DEPOSIT' || op.status !== 'FAILED' || reason === 'DEPOSIT_EXPIRED')
    throw invalidState(op, 'a DEPOSIT whose reconciliation FAILED');
  const before = op.updatedAt.getTime();
  try {
    await s.temporal.workflow.getHandle(operationWorkflowId(operationId)).signal(replaySignal);
  } catch (err) {
    // A FAILED reconciliation ran in the workflow, so it started: gone now means its replay window closed.
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    throw new CambioError('INVALID_STATE', 'the replay window of this deposit has closed', {
      status: op.status,
      type: op.type,
    });
  }
  return presentOperation(
    await waitFor(em, operationId, (o) => o.status === 'COMPLETED' || o.updatedAt.getTime() > before),
  );
}

/** Operator: approve or reject a withdrawal held for review. */
export async function decideHold(s: ServiceContext, em: Em, operationId: string, decision: HoldDecision) {
  const op = await load(em, operationId);
  if (op.type !== 'WITHDRAWAL' || op.status !== 'ON_HOLD') throw invalidState(op, 'a WITHDRAWAL ON_HOLD');
  await s.temporal.workflow.getHandle(operationWorkflowId(operationId)).signal(holdDecisionSignal, decision);
  return presentOperation(await waitFor(em, operationId, (o) => o.status === 'COMPLETED' || o.status === 'FAILED'));
}
