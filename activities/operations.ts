import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import type { PayoutRequest } from '../rails/rail';
import { payoutIdFor } from '../rails/pix/ids';
import { railsFromConfig } from '../rails';
import { railTransactionType } from '../rails/registry';
import { addOperationState, lockOperationForStep } from '../db/repositories/operations';
import type { Em } from '../db/orm';
import { SqlBatch } from '../db/batch';
import type { InboundPayment, InboundPaymentStatus, Operation, OperationStatus } from '../db/entities';
import { addDecision, addRemainder, findPayment, paymentsOfDeposit } from '../db/repositories/inbound-payments';
import { addEvent } from '../db/repositories/events';
import { addPosting } from '../db/repositories/ledger';
import { addMovements } from '../db/repositories/movements';
import type { AssetCode } from '../domain/assets';
import { Dec, formatAmount } from '../domain/money';
import { releasePostings, settlePostings } from '../domain/postings';
import { Reason, transition } from '../domain/states';
import { operationEventPayload } from '../webhooks/operation-event';
import { amount } from '../domain/amount';
import type { ActivityDeps } from './deps';
import { inActivityTransaction } from './failures';

const FINAL: readonly OperationStatus[] = ['COMPLETED', 'FAILED'];
/** A withdrawal's payout: what to send and on which queue, or the PSP's answer already recorded. */
export type PayoutOrder =
  | { recorded: { ok: boolean; endToEnd: string }; taskQueue?: undefined; request?: undefined }
  | {
      recorded?: undefined;
      taskQueue: string;
      /** The beneficiary's rail (absent from orders that histories recorded before decision 0118: PIX's then). */
      rail: string;
      request: PayoutRequest;
    };

export type ReconcileOutcome = 'COMPLETED' | 'FAILED';

/** `open`: the deposit still takes payments (waiting, or FAILED and replayable). */
export interface DecideInput {
  operationId: string;
  paymentId: string;
  open: boolean;
}

/**
 * Operation steps. Each runs in one database transaction holding the operation's row lock, checks the state
 * it finds first (so a retry after a crash past COMMIT changes nothing), and writes the ledger with a unique
 * key per step (`${id}:settle`, `${id}:release`), the state change and its event together. The writes of a step
 * go to Postgres as one batch (db/batch.ts): the lock, then one round trip, then COMMIT.
 */
export function createOperationActivities(deps: ActivityDeps) {
  const inTx = <T>(fn: (em: Em) => Promise<T>) => inActivityTransaction(deps.orm, fn);
  let rails = deps.rails;

  /** The operation, its row locked until COMMIT; a plain object, written back by `save`. */
  async function lock(em: Em, id: string): Promise<Operation> {
    const op = await lockOperationForStep(em, id);
    // Retrying cannot make a missing operation appear: fail the step, not retry it forever.
    if (!op) throw ApplicationFailure.nonRetryable(`operation ${id} not found`, 'OPERATION_NOT_FOUND');
    return op;
  }

  /** What a step changes on the operation: its state and history, its transactions. */
  function save(batch: SqlBatch, op: Operation) {
    addOperationState(batch, op);
  }

  function emitEvent(batch: SqlBatch, op: Operation, type: string, at: Date) {
    addEvent(batch, deps.config, {
      customerId: op.customerId,
      type,
      resourceType: 'OPERATION',
      resourceId: op.id,
      dedupeKey: `${op.id}:${type.replace('OPERATION_', '')}`,
      atTime: at,
      payload: operationEventPayload(op, at),
    });
  }

  /** Settlement, COMPLETED, movements and the event, as statements of `batch` (the caller saves and runs it). */
  function complete(batch: SqlBatch, op: Operation) {
    addPosting(batch, {
      key: `${op.id}:settle`,
      operationId: op.id,
      customerId: op.customerId,
      description: `${op.type} settlement`,
      postings: settlePostings(op),
    });
    const at = new Date();
    transition(op, 'COMPLETED', at);
    addMovements(batch, op, at);
    emitEvent(batch, op, 'OPERATION_COMPLETED', at);
  }

  const steps = {
    /** PROCESSING and ON_HOLD are read through GET only: no event (spec). */
    async setOperationStatus(input: {
      operationId: string;
      status: 'PROCESSING' | 'ON_HOLD';
    }): Promise<OperationStatus> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        if (!FINAL.includes(op.status) && transition(op, input.status, new Date())) {
          const batch = new SqlBatch();
          save(batch, op);
          await batch.run(em);
        }
        return op.status;
      });
    },

    /** PROCESSING, settlement and COMPLETED in one transaction: the history shows each step, one round trip. */
    async completeOperation(input: { operationId: string }): Promise<OperationStatus> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        if (FINAL.includes(op.status)) return op.status;
        transition(op, 'PROCESSING', new Date());
        const batch = new SqlBatch();
        complete(batch, op);
        save(batch, op);
        await batch.run(em);
        return op.status;
      });
    },

    /** Fails the operation and gives back what it reserved. */
    async failOperation(input: { operationId: string; reason: Reason }): Promise<OperationStatus> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        if (FINAL.includes(op.status)) return op.status;
        const batch = new SqlBatch();
        if (op.type !== 'DEPOSIT') {
          addPosting(batch, {
            key: `${op.id}:release`,
            operationId: op.id,
            customerId: op.customerId,
            description: `${op.type} release`,
            postings: releasePostings(op),
          });
        }
        const at = new Date();
        transition(op, 'FAILED', at, input.reason);
        emitEvent(batch, op, 'OPERATION_FAILED', at);
        save(batch, op);
        await batch.run(em);
        return op.status;
      });
    },

    /**
     * Decides one inbound payment reported for this deposit (the workflow's `inboundPayment` update runs it, one at
     * a time): while the deposit is `open` (waiting, or FAILED and replayable) a payment in its source asset counts
     * toward it (MATCHED); otherwise, or in another asset, it is UNMATCHED and stays in the customer's suspense. A
     * record already decided keeps its decision (the retry of an update).
     */
    async decideInboundPayment(input: DecideInput): Promise<InboundPaymentStatus> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        const payment = await findPayment(em, input.paymentId, { lock: true });
        if (!payment || payment.operationId !== op.id) {
          // A made-up or misdirected payment id stays wrong however often it is retried.
          const message = `payment ${input.paymentId} is not one of operation ${op.id}`;
          throw ApplicationFailure.nonRetryable(message, 'PAYMENT_NOT_OF_DEPOSIT');
        }
        if (payment.status !== 'RECEIVED') return payment.status;
        const counts = input.open && op.status !== 'COMPLETED' && payment.asset === op.sourceAsset;
        const status = counts ? 'MATCHED' : 'UNMATCHED';
        const batch = new SqlBatch();
        addDecision(batch, payment.id, { status });
        await batch.run(em);
        return status;
      });
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
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        if (op.status === 'COMPLETED') return 'COMPLETED';
        const payments = await paymentsOfDeposit(em, op.id);
        const batch = new SqlBatch();
        for (const p of payments.filter((x) => x.status === 'RECEIVED')) {
          p.status = p.asset === op.sourceAsset ? 'MATCHED' : 'UNMATCHED';
          addDecision(batch, p.id, { status: p.status });
        }
        const matched = payments.filter((p) => p.status === 'MATCHED');
        const wrongAsset = payments.find((p) => p.asset !== op.sourceAsset && !p.remainderOf);
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
          complete(batch, op);
          save(batch, op);
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
          emitEvent(batch, op, 'OPERATION_FAILED', at);
        }
        op.updatedAt = new Date();
        save(batch, op);
        await batch.run(em);
        return 'FAILED';
      });
    },

    /**
     * The deposit takes no more payments (completed, expired, or its replay window closed): whatever still counts
     * toward it without having been credited, and whatever nobody decided, is UNMATCHED from now on.
     */
    async closeDeposit(input: { operationId: string }): Promise<number> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        const uncredited = (p: InboundPayment) => p.status === 'MATCHED' && op.status !== 'COMPLETED';
        const open = (await paymentsOfDeposit(em, op.id)).filter((p) => p.status === 'RECEIVED' || uncredited(p));
        const batch = new SqlBatch();
        for (const p of open) addDecision(batch, p.id, { status: 'UNMATCHED', matchedAmount: null });
        await batch.run(em);
        return open.length;
      });
    },

    /**
     * What the payout sends: its idEnvio (from the operation, so every retry and replay names the same payout),
     * amount and key, and the task queue of provider calls; or the outcome already recorded.
     */
    async payoutOrder(input: { operationId: string }): Promise<PayoutOrder> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        const recorded = op.transactions.find((t) => t.direction === 'DEBIT');
        if (recorded) return { recorded: { ok: recorded.status === 'COMPLETED', endToEnd: recorded.endToEnd } };
        const instruction = (op.intent.beneficiary as { paymentInstruction: { rail: string; key: string } })
          .paymentInstruction;
        return {
          taskQueue: deps.config.railsTaskQueue,
          rail: instruction.rail,
          request: {
            payoutId: payoutIdFor(op.id),
            amount: formatAmount(op.targetAmount, op.targetAsset as AssetCode),
            key: instruction.key,
            // CRYPTO pays in several stablecoins: the connector needs which (decision 0134).
            asset: op.targetAsset,
          },
        };
      });
    },

    /**
     * Records the PSP's final answer on the operation as its PIX transaction: COMPLETED with the end-to-end id
     * of the Pix that left, or FAILED with the reason. The first answer recorded stays (a retry reads it).
     */
    async recordPayout(input: {
      operationId: string;
      status: 'COMPLETED' | 'FAILED';
      endToEnd?: string;
      reason?: string;
    }): Promise<{ ok: boolean; endToEnd: string }> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        const existing = op.transactions.find((t) => t.direction === 'DEBIT');
        if (existing) return { ok: existing.status === 'COMPLETED', endToEnd: existing.endToEnd };
        const ok = input.status === 'COMPLETED';
        const at = new Date();
        const endToEnd = input.endToEnd ?? '';
        op.transactions = [
          ...op.transactions,
          {
            id: randomUUID(),
            type: railTransactionType(
              (op.intent.beneficiary as { paymentInstruction: { rail: string } }).paymentInstruction.rail,
            ),
            direction: 'DEBIT',
            amount: amount(op.targetAmount, op.targetAsset),
            status: ok ? 'COMPLETED' : 'FAILED',
            endToEnd,
            createdAt: at.toISOString(),
            ...(ok ? {} : { reason: 'PAYOUT_REJECTED' }),
          },
        ];
        op.updatedAt = at;
        const batch = new SqlBatch();
        save(batch, op);
        await batch.run(em);
        return { ok, endToEnd };
      });
    },

    /**
     * The payout step of withdrawals started before payouts went through the rails' task queue: the same PSP
     * calls, in one activity. It records only a final answer of the PSP; while the payout is pending it fails
     * (retryable), and Temporal runs it again, which re-reads the same idEnvio.
     */
    async executePayout(input: { operationId: string }): Promise<{ ok: boolean; endToEnd: string }> {
      const order = await steps.payoutOrder(input);
      if (order.recorded) return order.recorded;
      rails ??= railsFromConfig(deps.config);
      const pix = rails.connector(order.rail)?.payouts;
      if (!pix)
        throw ApplicationFailure.nonRetryable(`no provider is configured for ${order.rail}`, 'RAIL_NOT_CONFIGURED');
      let state = await pix.sendPayout(order.request);
      for (let i = 0; state.status === 'PENDING' && i < 20; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        state = await pix.payoutStatus(order.request.payoutId);
      }
      if (state.status === 'PENDING') throw new Error(`payout ${state.payoutId} is still pending at the PSP`);
      return steps.recordPayout({ ...input, status: state.status, endToEnd: state.endToEndId, reason: state.reason });
    },
  };
  return steps;
}
