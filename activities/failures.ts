import { ApplicationFailure } from '@temporalio/common';
import { systemEm } from '../db/orm';
import type { Em, Orm } from '../db/orm';
import { CambioError } from '../domain/errors';
import { inTransaction } from '../db/transaction';

/**
 * Business failures must not be retried: turn a CambioError into a non-retryable ApplicationFailure whose
 * `type` is the code, so workflows branch on `err.cause.type`. Anything else stays retryable.
 */
export async function asActivity<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof CambioError) throw ApplicationFailure.nonRetryable(err.message, err.code, err.details);
    throw err;
  }
}

/**
 * The shape of every Cambio activity: one database transaction in the system scope (activities act across
 * customers), its business failures made non-retryable.
 */
export function inActivityTransaction<T>(orm: Orm, fn: (em: Em) => Promise<T>): Promise<T> {
  // inTransaction: a deadlock victim runs again at once instead of waiting for Temporal's retry back-off.
  return asActivity(() => inTransaction(systemEm(orm), fn));
}
