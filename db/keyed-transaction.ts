// One key, one transaction: a mutating request runs at most once per (customer, idempotency key), and the answer
// stored for the key commits in the same transaction as the request's business writes, or not at all.
//
//   BEGIN; take the key (advisory lock, no wait) and read its stored answer; SAVEPOINT handler   one round trip
//     key held by a live request                      -> busy, nothing stored (409)
//     stored answer, same request / other request     -> replay it / reused (422)
//   run the handler (its statements run inside the savepoint)
//     success           RELEASE SAVEPOINT; store the answer (if the caller stores one)          one round trip
//     business error    ROLLBACK TO SAVEPOINT; store the error's answer                        one round trip
//     anything else     ROLLBACK, store nothing: the retry with the key runs it again
//   COMMIT
//
// A crash before COMMIT leaves nothing (the lock dies with the connection); a crash after it leaves the answer,
// which the retry replays. A deadlock or serialization failure runs the whole transaction again (inTransaction).
// One race is left: another request with the key may commit between our statement's snapshot and our lock, so we
// find no answer and run the handler, but the store then finds that request's live row and refuses to overwrite it.
// This transaction must not commit, so it rolls back and runs once more, and that run replays the stored answer.
import { SqlBatch } from './batch';
import type { Em } from './orm';
import { addStoreAnswer, addTakeKey, StoredAnswer } from './repositories/idempotency';
import { inTransaction } from './transaction';

export interface KeyedRequest {
  key: string;
  /** What makes two requests with one key the same request (method, path, canonical body). */
  requestHash: string;
}

/** An answer as stored for a key: an HTTP status and body. */
export interface Answer {
  status: number;
  body: unknown;
}

export type KeyedOutcome<T> =
  | { kind: 'busy' }
  | { kind: 'reused' }
  | { kind: 'replay'; answer: Answer }
  | { kind: 'done'; result: T }
  | { kind: 'failed'; error: unknown };

export interface KeyedOptions<T> {
  /** The answer to store for a success; omitted, a success stores nothing (a step that an outside effect follows). */
  answerOf?: (result: T) => Answer;
  /** The answer of a business error, which is stored; undefined for any other error, which stores nothing. */
  storedError: (err: unknown) => Answer | undefined;
  /** Runs just before COMMIT (crash tests). */
  beforeCommit?: () => void;
  onRetry?: (err: unknown, attempt: number) => void;
}

const HANDLER = 'keyed_handler';

/** The key's live row was committed by another request after our look-up (see the race above). */
class KeyCommittedMeanwhile extends Error {}

// The run after a KeyCommittedMeanwhile finds the answer; a third one only guards against a row that expired between.
const MAX_RUNS = 3;

/**
 * Runs `handler` under the key of `request`, in the scope of `em` (the customer comes from its tenant scope), as
 * described at the top of this file. `handler` gets an EntityManager inside the savepoint: its unit of work is
 * flushed when it returns, and dropped when it throws.
 */
export async function inKeyedTransaction<T>(
  em: Em,
  request: KeyedRequest,
  handler: (tx: Em) => Promise<T>,
  opts: KeyedOptions<T>,
): Promise<KeyedOutcome<T>> {
  for (let run = 1; ; run++) {
    try {
      return await inTransaction(em, (tx) => once(tx, request, handler, opts), { onRetry: opts.onRetry });
    } catch (err) {
      if (!(err instanceof KeyCommittedMeanwhile) || run >= MAX_RUNS) throw err;
    }
  }
}

async function once<T>(
  tx: Em,
  request: KeyedRequest,
  handler: (tx: Em) => Promise<T>,
  opts: KeyedOptions<T>,
): Promise<KeyedOutcome<T>> {
  const opening = new SqlBatch();
  const taken = addTakeKey(opening, tx, request.key);
  opening.add(`savepoint ${HANDLER}`);
  await opening.run(tx);
  const key = taken();
  if (!key.locked) return { kind: 'busy' };
  if (key.stored) {
    return key.stored.requestHash === request.requestHash
      ? { kind: 'replay', answer: answerOf(key.stored) }
      : { kind: 'reused' };
  }

  let outcome: KeyedOutcome<T>;
  let answer: Answer | undefined;
  const closing = new SqlBatch();
  try {
    const inner = tx.fork({ keepTransactionContext: true, cloneEventManager: true });
    const result = await handler(inner);
    await inner.flush();
    outcome = { kind: 'done', result };
    answer = opts.answerOf?.(result);
    // Released with the answer's statement; with no answer to store, the COMMIT ends it without a message of its own.
    if (answer) closing.add(`release savepoint ${HANDLER}`);
  } catch (err) {
    answer = opts.storedError(err);
    if (!answer) throw err;
    outcome = { kind: 'failed', error: err };
    // The failed statement may have aborted the transaction: the rollback comes first in the next message.
    closing.add(`rollback to savepoint ${HANDLER}`);
  }
  const stored = answer && addStoreAnswer(closing, tx, request.key, { requestHash: request.requestHash, ...answer });
  await closing.run(tx); // an empty batch sends nothing
  if (stored && !stored()) throw new KeyCommittedMeanwhile();
  opts.beforeCommit?.();
  return outcome;
}

const answerOf = (stored: StoredAnswer): Answer => ({ status: stored.status, body: stored.body });
