import { createHash, randomUUID } from 'node:crypto';
import type { Em } from '../db/orm';
import { SqlBatch } from '../db/batch';
import { entityFromRow } from '../db/rows';
import { InboundPaymentSchema, Operation, OperationSchema, OperationStatus } from '../db/entities';
import { addEvent } from '../db/repositories/events';
import { addPosting } from '../db/repositories/ledger';
import { addMovements } from '../db/repositories/movements';
import type { AssetCode } from '../domain/assets';
import { Dec, formatAmount } from '../domain/money';
import { releasePostings, settlePostings } from '../domain/postings';
import { Reason, transition } from '../domain/states';
import { operationEventPayload } from '../events/operation';
import { amount } from '../api/presenters/amount';
import type { ActivityDeps } from './deps';
import { inActivityTransaction } from './failures';

const FINAL: readonly OperationStatus[] = ['COMPLETED', 'FAILED'];
// docs/decisions.md: sandbox PIX payouts to this key are rejected by the "bank".
export const FAILING_PAYOUT_KEY = 'payout-fails@example.com';

export type ReconcileOutcome = 'COMPLETED' | 'FAILED';

/**
 * Operation steps. Each runs in one database transaction holding the operation's row lock, checks the state
 * it finds first (so a retry after a crash past COMMIT changes nothing), and writes the ledger with a unique
 * key per step (`${id}:settle`, `${id}:release`), the state change and its event together. The writes of a step
 * go to Postgres as one batch (db/batch.ts): the lock, then one round trip, then COMMIT.
 */
export function createOperationActivities(deps: ActivityDeps) {
  const inTx = <T>(fn: (em: Em) => Promise<T>) => inActivityTransaction(deps.orm, fn);

  /** The operation, its row locked until COMMIT; a plain object, written back by `save`. */
  async function lock(em: Em, id: string): Promise<Operation> {
    const [row] = await em.execute('select * from operations where id = ? for update', [id]);
    if (!row) throw new Error(`operation ${id} not found`);
    return entityFromRow(em, OperationSchema, row);
  }

  /** What a step changes on the operation: its state and history, its transactions. */
  function save(batch: SqlBatch, op: Operation) {
    batch.add('update operations set status = ?, states = ?::jsonb, transactions = ?::jsonb, updated_at = ? where id = ?', [
      op.status,
      JSON.stringify(op.states),
      JSON.stringify(op.transactions),
      op.updatedAt,
      op.id,
    ]);
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
    addPosting(batch, { key: `${op.id}:settle`, operationId: op.id, customerId: op.customerId, description: `${op.type} settlement`, postings: settlePostings(op) });
    const at = new Date();
    transition(op, 'COMPLETED', at);
    addMovements(batch, op, at);
    emitEvent(batch, op, 'OPERATION_COMPLETED', at);
  }

  return {
    /** PROCESSING and ON_HOLD are read through GET only: no event (spec). */
    async setOperationStatus(input: { operationId: string; status: 'PROCESSING' | 'ON_HOLD' }): Promise<OperationStatus> {
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
          addPosting(batch, { key: `${op.id}:release`, operationId: op.id, customerId: op.customerId, description: `${op.type} release`, postings: releasePostings(op) });
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
     * Matches every inbound payment recorded for a deposit against its quote: the payer must send exactly the
     * quote's source amount in its source asset. Runs again on replay, over all payments, late ones included.
     */
    async reconcileDeposit(input: { operationId: string }): Promise<ReconcileOutcome> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        if (op.status === 'COMPLETED') return 'COMPLETED';
        const payments = await em.find(InboundPaymentSchema, { operationId: op.id }, { orderBy: { createdAt: 'asc' } });
        const wrongAsset = payments.find((p) => p.asset !== op.sourceAsset);
        const received = payments.filter((p) => p.asset === op.sourceAsset).reduce((sum, p) => sum.plus(p.amount), new Dec(0));
        const matched = !wrongAsset && received.eq(op.sourceAmount);
        const rail = (op.intent.fundingInstruction as { rail: string }).rail;
        op.transactions = payments.map((p) => ({
          id: p.id,
          type: rail === 'PIX_KEY' ? 'PIX' : rail,
          direction: 'CREDIT',
          amount: amount(p.amount, p.asset),
          status: matched ? 'COMPLETED' : 'FAILED',
          endToEnd: p.endToEndId,
          createdAt: p.createdAt.toISOString(),
        }));
        const batch = new SqlBatch();
        if (matched) {
          transition(op, 'PROCESSING', new Date());
          complete(batch, op);
          save(batch, op);
          await batch.run(em);
          return 'COMPLETED';
        }
        if (op.status !== 'FAILED') {
          const reason: Reason = wrongAsset
            ? { code: 'ASSET_MISMATCH', message: `expected ${op.sourceAsset}, received ${wrongAsset.asset}`, details: { expectedAsset: op.sourceAsset, receivedAsset: wrongAsset.asset } }
            : { code: 'AMOUNT_MISMATCH', message: `expected ${formatAmount(op.sourceAmount, op.sourceAsset as AssetCode)} ${op.sourceAsset}, received ${formatAmount(received, op.sourceAsset as AssetCode)}`, details: { expected: amount(op.sourceAmount, op.sourceAsset), received: amount(received, op.sourceAsset) } };
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
     * Sandbox PIX payout. The result is stored on the operation as its PIX transaction before returning, so
     * a retry reads the stored result instead of paying out again.
     */
    async executePayout(input: { operationId: string }): Promise<{ ok: boolean; endToEnd: string }> {
      return inTx(async (em) => {
        const op = await lock(em, input.operationId);
        const existing = op.transactions.find((t) => t.direction === 'DEBIT');
        if (existing) return { ok: existing.status === 'COMPLETED', endToEnd: existing.endToEnd };
        const instruction = (op.intent.beneficiary as { paymentInstruction: { keyType: string; key: string } }).paymentInstruction;
        const ok = !(instruction.keyType === 'EMAIL' && instruction.key.toLowerCase() === FAILING_PAYOUT_KEY);
        const at = new Date();
        const endToEnd = endToEndId(op.id, at);
        op.transactions = [
          ...op.transactions,
          {
            id: randomUUID(),
            type: 'PIX',
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
  };
}

/** A PIX end-to-end id: E + participant ISPB (8) + yyyyMMddHHmm + 11 characters, 32 in all. */
function endToEndId(operationId: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
  const tail = createHash('sha256').update(operationId).digest('hex').slice(0, 11);
  return `E12345678${stamp}${tail}`;
}
