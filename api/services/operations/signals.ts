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
import { freshEm, inOwnTransaction } from '../../../db/transaction';

// Reads past the identity map on the caller's connection: a request polling inside its transaction must not
// take a second pool connection per read (db/transaction.ts, freshEm).
async function load(em: Em, id: string): Promise<Operation> {
  const op = await freshEm(em).findOne(OperationSchema, { id });
  if (!op) throw notFound('operation');
  return op;
}

const waitFor = (em: Em, id: string, done: (op: Operation) => boolean) => pollUntil(() => load(em, id), done, { intervalMs: 50 });

const invalidState = (op: Operation, wanted: string) =>
  new CambioError('INVALID_STATE', `operation is ${op.type} in ${op.status}; this needs ${wanted}`, { status: op.status, type: op.type });

/**
 * Records a payment received for a deposit, then tells its workflow. The payment is committed first, in its own
 * transaction, so that the reconciliation the signal triggers sees it (and a replay sees it even if the signal
 * were lost); recorded after a failed reconciliation, it waits for replay.
 *
 * `paymentId` names the payment. The API derives it from the request's idempotency key: a request that died
 * after the payment's COMMIT and is retried with its key finds its own payment, signals again (the workflow only
 * counts signals; reconciliation reads the payment rows) and answers as the first attempt would have, instead of
 * recording the money twice. The CLI, which has no key, records a new payment per call.
 */
export async function recordInboundPayment(
  s: ServiceContext,
  em: Em,
  operationId: string,
  body: { amount: { value: string; asset: AssetCode }; endToEndId?: string },
  opts: { paymentId?: string } = {},
) {
  const op = await load(em, operationId);
  const paymentId = opts.paymentId ?? randomUUID();
  const before = op.states.length;
  const earlier = opts.paymentId ? await freshEm(em).findOne(InboundPaymentSchema, { id: paymentId }) : null;
  if (earlier && earlier.operationId !== operationId) throw new Error(`payment id ${paymentId} belongs to another operation`);
  if (!earlier) {
    if (op.type !== 'DEPOSIT') throw invalidState(op, 'a DEPOSIT');
    const expired = op.status === 'FAILED' && currentState(op.states).reason?.code === 'DEPOSIT_EXPIRED';
    if (op.status === 'COMPLETED' || expired) throw invalidState(op, 'an open deposit');
    const value = parseAmountValue(body.amount.value, body.amount.asset, { path: '/amount/value' });
    try {
      // Its own transaction: it must be committed before the workflow looks for it, whatever transaction the
      // caller holds open (on the side pool then: a second connection of the caller's pool can deadlock it).
      await inOwnTransaction(em, async (tx) => {
        tx.create(InboundPaymentSchema, {
          id: paymentId,
          operationId,
          customerId: op.customerId,
          amount: value,
          asset: body.amount.asset,
          endToEndId: body.endToEndId ?? `E${randomUUID().replace(/-/g, '').slice(0, 31)}`,
          createdAt: new Date(),
        });
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new CambioError('VALIDATION_ERROR', 'endToEndId was already recorded', { errors: [{ path: '/endToEndId', message: 'already recorded' }] });
      throw err;
    }
  }
  if (op.status !== 'COMPLETED') {
    try {
      await signalDeposit(s, operationId, paymentId);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      // Reconciled already (a retry of a request that died after the workflow closed): answer with what it did.
      if (earlier) return getOperation(freshEm(em), operationId);
      // The workflow finished: its replay window closed. Nothing will ever reconcile this payment, so refuse it.
      await inOwnTransaction(em, (tx) => tx.nativeDelete(InboundPaymentSchema, { id: paymentId }));
      throw new CambioError('INVALID_STATE', 'the replay window of this deposit has closed', { status: op.status, type: op.type });
    }
  }
  // Done once a reconciliation has seen this payment, or one that started before it ended the deposit. A payment
  // on a FAILED deposit waits for a replay: nothing to wait for.
  if (op.status !== 'FAILED') {
    await waitFor(em, operationId, (o) => o.transactions.some((t) => t.id === paymentId) || o.status === 'COMPLETED' || (o.states.length > before && o.status === 'FAILED'));
  }
  return getOperation(freshEm(em), operationId);
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
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // No outbox row either: the create's after-commit start may have started the workflow and removed its row
    // since the signal above missed it, so signal once more either way; a workflow that really ended (its replay
    // window closed) answers not-found again.
    await startPendingWorkflow(s.orm, s.temporal, s.config.taskQueue, operationWorkflowId(operationId));
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
  return getOperation(freshEm(em), operationId);
}

/** Operator: approve or reject a withdrawal held for review. */
export async function decideHold(s: ServiceContext, em: Em, operationId: string, decision: HoldDecision) {
  const op = await load(em, operationId);
  if (op.type !== 'WITHDRAWAL' || op.status !== 'ON_HOLD') throw invalidState(op, 'a WITHDRAWAL ON_HOLD');
  await s.temporal.workflow.getHandle(operationWorkflowId(operationId)).signal(holdDecisionSignal, decision);
  await waitFor(em, operationId, (o) => o.status === 'COMPLETED' || o.status === 'FAILED');
  return getOperation(freshEm(em), operationId);
}
