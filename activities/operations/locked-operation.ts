import { ApplicationFailure } from '@temporalio/activity';
import type { Config } from '../../config';
import { SqlBatch } from '../../db/batch';
import type { Operation, OperationStatus } from '../../db/entities';
import type { Em } from '../../db/orm';
import { addEvent } from '../../db/repositories/events';
import { addPosting } from '../../db/repositories/ledger';
import { addMovements } from '../../db/repositories/movements';
import { addOperationState, lockOperationForStep } from '../../db/repositories/operations';
import { settlePostings } from '../../domain/postings';
import { transition } from '../../domain/states';
import { operationEventPayload } from '../../webhooks/operation-event';

// What every operation step shares: the operation's row locked until COMMIT, read as a plain object and written back
// as statements of one batch (db/batch.ts), with its ledger postings, movements and events keyed so that a retry
// after a crash past COMMIT writes nothing twice.

/** A step finds these and changes nothing. */
export const FINAL: readonly OperationStatus[] = ['COMPLETED', 'FAILED'];

/** The operation, its row locked until COMMIT; a plain object, written back by `saveOperation`. */
export async function lockOperation(em: Em, id: string): Promise<Operation> {
  const op = await lockOperationForStep(em, id);
  // Retrying cannot make a missing operation appear: fail the step, not retry it forever.
  if (!op) throw ApplicationFailure.nonRetryable(`operation ${id} not found`, 'OPERATION_NOT_FOUND');
  return op;
}

/** What a step changes on the operation: its state and history, its transactions. */
export function saveOperation(batch: SqlBatch, op: Operation): void {
  addOperationState(batch, op);
}

/** The operation's webhook event, keyed per operation and type (a retried step adds it once). */
export function emitOperationEvent(batch: SqlBatch, config: Config, op: Operation, type: string, at: Date): void {
  addEvent(batch, config, {
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
export function completeInBatch(batch: SqlBatch, config: Config, op: Operation): void {
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
  emitOperationEvent(batch, config, op, 'OPERATION_COMPLETED', at);
}
