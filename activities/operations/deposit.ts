import { ApplicationFailure } from '@temporalio/activity';
import { SqlBatch } from '../../db/batch';
import type { InboundPayment, InboundPaymentStatus, Operation } from '../../db/entities';
import type { Em } from '../../db/orm';
import { addDecision, addRemainder, findPayment, paymentsOfDeposit } from '../../db/repositories/inbound-payments';
import { amount } from '../../domain/amount';
import type { AssetCode } from '../../domain/assets';
import { Dec, formatAmount } from '../../domain/money';
import { Reason, transition } from '../../domain/states';
import { railEntry, railTransactionType } from '../../rails/registry';
import type { ActivityDeps } from '../deps';
import { inActivityTransaction } from '../failures';
import { completeInBatch, emitOperationEvent, lockOperation, saveOperation } from './locked-operation';

/** REQUESTED: nothing counts toward the deposit yet (only a payment that arrived after its window: decision 0322). */
export type ReconcileOutcome = 'COMPLETED' | 'FAILED' | 'REQUESTED';

/** `open`: the deposit still takes payments (waiting, or FAILED and replayable). */
export interface DecideInput {
  operationId: string;
  paymentId: string;
  open: boolean;
}

/** `reconcile`: the deposit still waits for its money, and reconciles with the payment once it is decided. */
export interface TakeInput extends DecideInput {
  reconcile: boolean;
}

/** What taking a payment did: its decision, and the reconciliation's outcome when it ran. */
export interface TakenPayment {
  decided: InboundPaymentStatus;
  reconciled?: ReconcileOutcome;
}

/** A deposit's own database steps: its payments decided, its reconciliation, its close. */
export type DepositActivities = ReturnType<typeof createDepositActivities>;

/**
 * Each runs in one database transaction holding the deposit's row lock and checks the state it finds first, so a
 * retry after a crash past COMMIT changes nothing; a payment's decision is written once.
 */
export function createDepositActivities(deps: ActivityDeps) {
  const inTx = <T>(fn: (em: Em) => Promise<T>) => inActivityTransaction(deps.orm, fn);
  /** One payment decided, in `em`'s transaction with the deposit's row (`op`) locked. */
  const decide = async (em: Em, op: Operation, input: DecideInput): Promise<InboundPaymentStatus> => {
    const payment = await findPayment(em, input.paymentId, { lock: true });
    if (!payment || payment.operationId !== op.id) {
      // A made-up or misdirected payment id stays wrong however often it is retried.
      const message = `payment ${input.paymentId} is not one of operation ${op.id}`;
      throw ApplicationFailure.nonRetryable(message, 'PAYMENT_NOT_OF_DEPOSIT');
    }
    if (payment.status !== 'RECEIVED') return payment.status;
    const counts =
      input.open && op.status !== 'COMPLETED' && payment.asset === op.sourceAsset && !arrivedLate(op, payment);
    const status = counts ? 'MATCHED' : 'UNMATCHED';
    const batch = new SqlBatch();
    addDecision(batch, payment.id, { status });
    await batch.run(em);
    return status;
  };

  /** The deposit reconciled, in `em`'s transaction with its row (`op`) locked. */
  const reconcile = async (em: Em, op: Operation): Promise<ReconcileOutcome> => {
    if (op.status === 'COMPLETED') return 'COMPLETED';
    const payments = await paymentsOfDeposit(em, op.id);
    const batch = new SqlBatch();
    for (const p of payments.filter((x) => x.status === 'RECEIVED')) {
      p.status = p.asset === op.sourceAsset && !arrivedLate(op, p) ? 'MATCHED' : 'UNMATCHED';
      addDecision(batch, p.id, { status: p.status });
    }
    const matched = payments.filter((p) => p.status === 'MATCHED');
    const wrongAsset = payments.find((p) => p.asset !== op.sourceAsset && !p.remainderOf && !arrivedLate(op, p));
    // A deposit still waiting whose payments all came after its window has nothing to reconcile: short of nothing, it
    // waits on for its own money until its window (and its wait) ends (decision 0322).
    if (op.status === 'REQUESTED' && matched.length === 0 && !wrongAsset) {
      await batch.run(em);
      return 'REQUESTED';
    }
    const received = matched.reduce((sum, p) => sum.plus(p.amount), new Dec(0));
    const rail = (op.intent.fundingInstruction as { rail: string }).rail;
    const credit = (p: InboundPayment, value: Dec, status: string) => ({
      id: p.id,
      type: railTransactionType(rail),
      direction: 'CREDIT' as const,
      amount: amount(value, p.asset),
      status,
      endToEnd: p.endToEndId,
      createdAt: p.createdAt.toISOString(),
    });
    if (received.gte(op.sourceAmount)) {
      let left = op.sourceAmount;
      op.transactions = [];
      for (const p of matched) {
        if (left.isZero()) {
          addDecision(batch, p.id, { status: 'UNMATCHED' });
        } else if (p.amount.gt(left)) {
          addDecision(batch, p.id, { status: 'MATCHED', matchedAmount: left });
          addRemainder(batch, p, p.amount.minus(left));
          op.transactions.push(credit(p, left, 'COMPLETED'));
          left = new Dec(0);
        } else {
          op.transactions.push(credit(p, p.amount, 'COMPLETED'));
          left = left.minus(p.amount);
        }
      }
      transition(op, 'PROCESSING', new Date());
      completeInBatch(batch, deps.config, op);
      saveOperation(batch, op);
      await batch.run(em);
      return 'COMPLETED';
    }
    op.transactions = matched.map((p) => credit(p, p.amount, 'FAILED'));
    if (op.status !== 'FAILED') {
      const reason: Reason = wrongAsset
        ? {
            code: 'ASSET_MISMATCH',
            message: `expected ${op.sourceAsset}, received ${wrongAsset.asset}`,
            details: { expectedAsset: op.sourceAsset, receivedAsset: wrongAsset.asset },
          }
        : {
            code: 'AMOUNT_MISMATCH',
            message:
              `expected ${formatAmount(op.sourceAmount, op.sourceAsset as AssetCode)} ${op.sourceAsset}, ` +
              `received ${formatAmount(received, op.sourceAsset as AssetCode)}`,
            details: {
              expected: amount(op.sourceAmount, op.sourceAsset),
              received: amount(received, op.sourceAsset),
            },
          };
      const at = new Date();
      transition(op, 'FAILED', at, reason);
      emitOperationEvent(batch, deps.config, op, 'OPERATION_FAILED', at);
    }
    op.updatedAt = new Date();
    saveOperation(batch, op);
    await batch.run(em);
    return 'FAILED';
  };

  return {
    /**
     * Decides one inbound payment reported for this deposit (the workflow's `inboundPayment` update runs it, one at
     * a time): while the deposit is `open` (waiting, or FAILED and replayable) a payment in its source asset counts
     * toward it (MATCHED); otherwise, or in another asset, it is UNMATCHED and stays in the customer's suspense. A
     * record already decided keeps its decision (the retry of an update).
     */
    async decideInboundPayment(input: DecideInput): Promise<InboundPaymentStatus> {
      return inTx(async (em) => decide(em, await lockOperation(em, input.operationId), input));
    },

    /**
     * Reconciles a deposit over the payments that count toward it (MATCHED, oldest first; a RECEIVED record of an
     * open deposit counts too: its reporter died before asking). Enough: the deposit takes exactly the quote's
     * source amount out of the customer's suspense and completes; the payment that crossed the amount keeps what it
     * received and records what the deposit used (`matchedAmount`), its excess split off as an UNMATCHED remainder;
     * later payments become UNMATCHED whole. Short: FAILED
     * (AMOUNT_MISMATCH, or ASSET_MISMATCH when a payment came in another asset), replayable after a top-up.
     */
    async reconcileDeposit(input: { operationId: string }): Promise<ReconcileOutcome> {
      return inTx(async (em) => reconcile(em, await lockOperation(em, input.operationId)));
    },

    /**
     * `decideInboundPayment`, then, when `reconcile`, `reconcileDeposit`, in one transaction under one lock of the
     * deposit's row (decision 0157): the step a deposit runs for each payment it takes. A retry after a crash past
     * COMMIT finds the payment decided and the deposit reconciled, and changes nothing.
     */
    async takeInboundPayment(input: TakeInput): Promise<TakenPayment> {
      return inTx(async (em) => {
        const op = await lockOperation(em, input.operationId);
        const decided = await decide(em, op, input);
        return input.reconcile ? { decided, reconciled: await reconcile(em, op) } : { decided };
      });
    },

    /**
     * The deposit takes no more payments (completed, expired, or its replay window closed): whatever still counts
     * toward it without having been credited, and whatever nobody decided, is UNMATCHED from now on.
     */
    async closeDeposit(input: { operationId: string }): Promise<number> {
      return inTx(async (em) => {
        const op = await lockOperation(em, input.operationId);
        const uncredited = (p: InboundPayment) => p.status === 'MATCHED' && op.status !== 'COMPLETED';
        const open = (await paymentsOfDeposit(em, op.id)).filter((p) => p.status === 'RECEIVED' || uncredited(p));
        const batch = new SqlBatch();
        for (const p of open) addDecision(batch, p.id, { status: 'UNMATCHED', matchedAmount: null });
        await batch.run(em);
        return open.length;
      });
    },
  };
}

/**
 * A payment a deposit still waiting for its money does not take: its rail knows it arrived after the deposit's window
 * (decision 0322). Once the deposit has taken a payment and failed short, a top-up after the window is taken as ever
 * (the product decisions: "replayable after a top-up").
 */
function arrivedLate(op: Operation, payment: InboundPayment): boolean {
  if (op.status !== 'REQUESTED') return false;
  const instruction = op.intent.fundingInstruction as { rail: string; expiresAt?: string };
  const paidAfter = railEntry(instruction.rail)?.paidAfterWindow;
  return !!paidAfter && !!instruction.expiresAt && paidAfter(payment, new Date(instruction.expiresAt));
}
