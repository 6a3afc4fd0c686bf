import { ApplicationFailure } from '@temporalio/common';
import { CambioError } from '../domain/errors';

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
