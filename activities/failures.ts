import { ApplicationFailure } from '@temporalio/common';
import { systemEm } from '../db/orm';
import type { Em, Orm } from '../db/orm';
import { CambioError } from '../domain/errors';
import { afterCommit, inTransaction } from '../db/transaction';
import type { WorkflowStartRequest } from '../api/services/workflow-starts';
import { startDeliveries } from '../events/deliveries';
import type { ActivityDeps } from './deps';

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
  // inTransaction: a deadlock victim runs again at once instead of waiting for Temporal's retry back-off, and
  // after-commit work registered by services runs after this transaction's COMMIT.
  return asActivity(() => inTransaction(systemEm(orm), fn));
}

/**
 * inActivityTransaction for steps that record events: the webhook deliveries the events fan out to start right
 * after COMMIT (low first-attempt latency); a start that fails stays in the outbox for the relay.
 */
export function inTransactionThenDeliver<T>(
  deps: ActivityDeps,
  fn: (em: Em, deliveries: WorkflowStartRequest[]) => Promise<T>,
): Promise<T> {
  return inActivityTransaction(deps.orm, async (em) => {
    // A fresh list per attempt: a transaction run again after a deadlock starts only what its COMMIT wrote.
    const deliveries: WorkflowStartRequest[] = [];
    const result = await fn(em, deliveries);
    await afterCommit(() => startDeliveries(deps, deliveries));
    return result;
  });
}
