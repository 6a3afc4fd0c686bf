import { SqlBatch } from '../../db/batch';
import type { OperationStatus } from '../../db/entities';
import type { Em } from '../../db/orm';
import { addPosting } from '../../db/repositories/ledger';
import { releasePostings } from '../../domain/postings';
import { Reason, transition } from '../../domain/states';
import type { ActivityDeps } from '../deps';
import { inActivityTransaction } from '../failures';
import { completeInBatch, emitOperationEvent, FINAL, lockOperation, saveOperation } from './locked-operation';
import { addUnpaidChargeCancel } from '../../payments/charge-cancel';

/**
 * An operation only moves forward: a withdrawal's run started again (decision 0315) that asks ON_HOLD of one already
 * PROCESSING is answered PROCESSING, and never moves it back under review (decision 0327).
 */
const MOVES_FROM: Record<'PROCESSING' | 'ON_HOLD', OperationStatus[]> = {
  ON_HOLD: ['REQUESTED'],
  PROCESSING: ['REQUESTED', 'ON_HOLD'],
};

/** The status steps every kind of operation takes: its status changes, its completion and its failure. */
export type OperationStatusActivities = ReturnType<typeof createOperationStatusActivities>;

/**
 * Each runs in one database transaction holding the operation's row lock, checks the state it finds first (so a
 * retry after a crash past COMMIT changes nothing), and writes the ledger with a unique key per step
 * (`${id}:settle`, `${id}:release`), the state change and its event together, as one batch.
 */
export function createOperationStatusActivities(deps: ActivityDeps) {
  const inTx = <T>(fn: (em: Em) => Promise<T>) => inActivityTransaction(deps.orm, fn);
  return {
    /** PROCESSING and ON_HOLD are read through GET only: no event (spec). */
    async setOperationStatus(input: {
      operationId: string;
      status: 'PROCESSING' | 'ON_HOLD';
    }): Promise<OperationStatus> {
      return inTx(async (em) => {
        const op = await lockOperation(em, input.operationId);
        if (MOVES_FROM[input.status].includes(op.status) && transition(op, input.status, new Date())) {
          const batch = new SqlBatch();
          saveOperation(batch, op);
          await batch.run(em);
        }
        return op.status;
      });
    },

    /** PROCESSING, settlement and COMPLETED in one transaction: the history shows each step, one round trip. */
    async completeOperation(input: { operationId: string }): Promise<OperationStatus> {
      return inTx(async (em) => {
        const op = await lockOperation(em, input.operationId);
        if (FINAL.includes(op.status)) return op.status;
        transition(op, 'PROCESSING', new Date());
        const batch = new SqlBatch();
        completeInBatch(batch, deps.config, op);
        saveOperation(batch, op);
        await batch.run(em);
        return op.status;
      });
    },

    /** Fails the operation and gives back what it reserved. */
    async failOperation(input: { operationId: string; reason: Reason }): Promise<OperationStatus> {
      return inTx(async (em) => {
        const op = await lockOperation(em, input.operationId);
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
        if (input.reason.code === 'DEPOSIT_EXPIRED') addUnpaidChargeCancel(batch, op, deps.config);
        transition(op, 'FAILED', at, input.reason);
        emitOperationEvent(batch, deps.config, op, 'OPERATION_FAILED', at);
        saveOperation(batch, op);
        await batch.run(em);
        return op.status;
      });
    },
  };
}
