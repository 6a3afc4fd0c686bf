// One transaction per unit of work (an API request, an activity, a CLI command), with what MikroORM's
// `em.transactional` does not give: a bounded retry when Postgres picks the transaction as a deadlock or
// serialization victim. Nothing waits for a COMMIT to act
// on what it wrote: a workflow to start is an outbox row, and its COMMIT wakes the relay that starts it
// (worker/workflow-start-relay.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Em } from './orm';

// Postgres aborts the victim of a deadlock (40P01) or of a serialization conflict (40001); running the whole
// transaction again is the documented remedy. Five attempts over at most ~1.5 s: lock ordering makes a
// deadlock rare, so a sixth would point at a bug rather than bad luck.
const MAX_ATTEMPTS = 5;
const BASE_DELAY_MS = 20;
const RETRYABLE = new Set(['40P01', '40001']);

export function isRetryableConflict(err: unknown): boolean {
  for (
    let e = err as { code?: string; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string' && RETRYABLE.has(e.code)) return true;
  }
  return false;
}

export interface TransactionOptions {
  /** Called once per retry (metrics, logs). */
  onRetry?: (err: unknown, attempt: number) => void;
  /**
   * False: on an EntityManager already in a transaction, run `fn` in that transaction as it is, without a
   * savepoint of its own. Only for a service whose failure the caller always undoes as a whole (a request's
   * handler: `idempotent` rolls back to its own savepoint or the whole transaction), so the SAVEPOINT and
   * RELEASE round trips buy nothing. Without a transaction it opens one as usual.
   */
  savepoint?: boolean;
}

/**
 * Given a service's result inside its transaction, before the COMMIT: for a record that must commit with the work or
 * not at all (an operator command's audit row, cli/audit.ts). Called again if the transaction is retried.
 */
export type BeforeCommit<T> = (result: T) => void;

/**
 * Runs `fn` in a transaction on `em`.
 * - `em` already in a transaction (a request's, an activity's): a savepoint inside it (MikroORM's nested
 *   `transactional`). A failure rolls back to the savepoint; nothing is retried here, because a deadlock
 *   victim's outer transaction must run again as a whole.
 * - Otherwise: a new top-level transaction, retried as a whole on deadlock/serialization failure.
 */
export async function inTransaction<T>(em: Em, fn: (tx: Em) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
  if (em.isInTransaction()) return opts.savepoint === false ? fn(em) : em.transactional((tx) => watched(tx, fn));
  for (let attempt = 1; ; attempt++) {
    try {
      return await em.transactional((tx) => watched(tx, fn));
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !isRetryableConflict(err)) throw err;
      opts.onRetry?.(err, attempt);
      // Full jitter: two victims of one deadlock must not collide again in lockstep.
      await sleep(Math.random() * BASE_DELAY_MS * 2 ** attempt);
    }
  }
}

/** A transaction that ended under its caller because its connection failed; `cause` is the connection's error. */
export class TransactionLost extends Error {
  constructor(cause: unknown) {
    super(`the transaction's connection failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'TransactionLost';
  }
}

// Knex hands over a transaction whose BEGIN or SAVEPOINT failed (the connection was lost just then) already marked
// complete: its first statement fails with this message, and the connection error that ended it is only in the
// transaction's own promise. Without it the failure would read as a bug (a 500) instead of an outage (a 503).
const ALREADY_COMPLETE = /^Transaction query already complete/;

/** Runs `fn` in `tx`, and puts the connection error back as the cause when the transaction ended under `fn`. */
async function watched<T>(tx: Em, fn: (tx: Em) => Promise<T>): Promise<T> {
  let endedBy: unknown;
  tx.getTransactionContext<{ executionPromise?: Promise<unknown> }>()?.executionPromise?.catch((err: unknown) => {
    endedBy = err;
  });
  try {
    return await fn(tx);
  } catch (err) {
    if (endedBy !== undefined && err instanceof Error && ALREADY_COMPLETE.test(err.message)) {
      throw new TransactionLost(endedBy);
    }
    throw err;
  }
}

/**
 * An EntityManager for re-reading rows the caller's transaction may not have seen yet (a workflow changed them
 * meanwhile): a fresh identity map on the SAME connection and transaction. Under READ COMMITTED each statement
 * sees the latest commits, and a request that holds its transaction open while it polls does not take a
 * second pool connection per read.
 */
export const freshEm = (em: Em): Em => em.fork({ keepTransactionContext: true });
