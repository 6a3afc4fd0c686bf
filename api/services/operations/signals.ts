import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Em } from '../../../db/orm';
import { InboundPaymentSchema, Operation, OperationSchema } from '../../../db/entities';
import type { AssetCode } from '../../../domain/assets';
import { CambioError } from '../../../domain/errors';
import { parseAmountValue } from '../../../domain/money';
import { currentState } from '../../../domain/states';
import { operationWorkflowId } from '../../../workflows/ids';
import { holdDecisionSignal, HoldDecision, inboundPaymentSignal, replaySignal } from '../../../workflows/operation';
import { notFound } from '../../errors';
import { pollUntil } from '../poll';
import type { ServiceContext } from '../context';
import { getOperation } from './read';
import { startPendingWorkflow } from '../workflow-starts';

async function load(em: Em, id: string): Promise<Operation> {
  const op = await em.fork().findOne(OperationSchema, { id });
  if (!op) throw notFound('operation');
  return op;
}

const waitFor = (em: Em, id: string, done: (op: Operation) => boolean) => pollUntil(() => load(em, id), done, { intervalMs: 50 });

const invalidState = (op: Operation, wanted: string) =>
  new CambioError('INVALID_STATE', `operation is ${op.type} in ${op.status}; this needs ${wanted}`, { status: op.status, type: op.type });

/**
 * Records a payment received for a deposit, then tells its workflow. The payment is written first so that
 * a replay sees it even if the signal were lost; recorded after a failed reconciliation, it waits for replay.
 */
export async function recordInboundPayment(s: ServiceContext, em: Em, operationId: string, body: { amount: { value: string; asset: AssetCode }; endToEndId?: string }) {
  const op = await load(em, operationId);
  if (op.type !== 'DEPOSIT') throw invalidState(op, 'a DEPOSIT');
  const expired = op.status === 'FAILED' && currentState(op.states).reason?.code === 'DEPOSIT_EXPIRED';
  if (op.status === 'COMPLETED' || expired) throw invalidState(op, 'an open deposit');
  const value = parseAmountValue(body.amount.value, body.amount.asset, { path: '/amount/value' });
  const before = op.states.length;
  const fork = em.fork();
  const paymentId = randomUUID();
  fork.create(InboundPaymentSchema, {
    id: paymentId,
    operationId,
    customerId: op.customerId,
    amount: value,
    asset: body.amount.asset,
    endToEndId: body.endToEndId ?? `E${randomUUID().replace(/-/g, '').slice(0, 31)}`,
    createdAt: new Date(),
  });
  try {
    await fork.flush();
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new CambioError('VALIDATION_ERROR', 'endToEndId was already recorded', { errors: [{ path: '/endToEndId', message: 'already recorded' }] });
    throw err;
  }
  try {
    await signalDeposit(s, operationId, paymentId);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // The workflow finished: its replay window closed. Nothing will ever reconcile this payment, so refuse it.
    await em.fork().nativeDelete(InboundPaymentSchema, { id: paymentId });
    throw new CambioError('INVALID_STATE', 'the replay window of this deposit has closed', { status: op.status, type: op.type });
  }
  if (op.status !== 'FAILED') await waitFor(em, operationId, (o) => o.states.length > before && o.status !== 'PROCESSING');
  return getOperation(em.fork(), operationId);
}

/**
 * Signals a deposit's workflow. If it was never started (the API died between COMMIT and the start, and the
 * relay has not run yet), start it from its outbox row first rather than refusing the payment.
 */
async function signalDeposit(s: ServiceContext, operationId: string, paymentId: string): Promise<void> {
  const handle = s.temporal.workflow.getHandle(operationWorkflowId(operationId));
  try {
    await handle.signal(inboundPaymentSignal, { paymentId });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError) || !(await startPendingWorkflow(s.orm, s.temporal, s.config.taskQueue, operationWorkflowId(operationId)))) throw err;
    await handle.signal(inboundPaymentSignal, { paymentId });
  }
}

/** Operator: re-run a failed deposit's reconciliation over every payment recorded so far. */
export async function replayDeposit(s: ServiceContext, em: Em, operationId: string) {
  const op = await load(em, operationId);
  const reason = currentState(op.states).reason?.code;
  if (op.type !== 'DEPOSIT' || op.status !== 'FAILED' || reason === 'DEPOSIT_EXPIRED') throw invalidState(op, 'a DEPOSIT whose reconciliation FAILED');
  const before = op.updatedAt.getTime();
  try {
    await s.temporal.workflow.getHandle(operationWorkflowId(operationId)).signal(replaySignal);
  } catch (err) {
    // A FAILED reconciliation ran in the workflow, so it started: gone now means its replay window closed.
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    throw new CambioError('INVALID_STATE', 'the replay window of this deposit has closed', { status: op.status, type: op.type });
  }
  await waitFor(em, operationId, (o) => o.status === 'COMPLETED' || o.updatedAt.getTime() > before);
  return getOperation(em.fork(), operationId);
}

/** Operator: approve or reject a withdrawal held for review. */
export async function decideHold(s: ServiceContext, em: Em, operationId: string, decision: HoldDecision) {
  const op = await load(em, operationId);
  if (op.type !== 'WITHDRAWAL' || op.status !== 'ON_HOLD') throw invalidState(op, 'a WITHDRAWAL ON_HOLD');
  await s.temporal.workflow.getHandle(operationWorkflowId(operationId)).signal(holdDecisionSignal, decision);
  await waitFor(em, operationId, (o) => o.status === 'COMPLETED' || o.status === 'FAILED');
  return getOperation(em.fork(), operationId);
}
