import { Em, tenantOf } from '../../db/orm';
import { Backlog, customerBacklogAndKey } from '../../db/repositories/operation-backlog';
import { CambioError } from '../../domain/errors';
import { keyInUse } from '../errors';
import { countRejection } from '../metrics';
import type { ServiceContext } from '../context';

// A Retry-After longer than this says more about a stuck operation at the head of the backlog than about the rate
// it drains at; the client hears "a minute" and asks again.
const MAX_RETRY_AFTER_SECONDS = 60;

/**
 * Admission per customer (decisions 0072, 0092): a customer with
 * `maxPendingOperationsPerCustomer` operations accepted but not yet started gets 429 RATE_LIMITED instead of one
 * more. Checked in the request's transaction from Postgres (`backlog`, read in one round trip with the operation's
 * accounts), so every API process sees the same backlog; concurrent requests of one customer may each see room, so
 * the bound can be passed by at most that customer's requests in flight. Nothing accepted is touched: a refused
 * request wrote nothing, and a retry with the same key runs again.
 *
 * Retry-After by Little's law: the backlog drains at about `count / age of its oldest` operations per second, so a
 * place frees in about `age / count` seconds (at least 1, at most MAX_RETRY_AFTER_SECONDS).
 */
export function admitOperation(s: ServiceContext, em: Em, backlog: Backlog): void {
  const bound = s.config.maxPendingOperationsPerCustomer;
  if (backlog.count < bound) return;
  gateFor(tenantOf(em));
  throw backlogFull(bound, backlog);
}

// How long after a refusal this process reads the backlog before a customer's transactions (a hint of this
// process only: the check in the transaction is the rule, and another process's refusals are not seen here).
const GATE_MS = 2000;
const refusing = new Map<string, number>();
const MAX_REFUSING = 10_000;

/**
 * The cheap refusal in front of the keyed transaction, for a customer this process refused within GATE_MS: one
 * read outside any transaction, of the backlog, whether the request's key already holds an answer, and whether a
 * live request holds the key. Still full and the key free and unknown: 429 at the cost of that read, not of a
 * transaction, so a customer that keeps posting past its bound (a careless client retrying every few
 * milliseconds) spends little of the engine that others share. A key with a stored answer goes on to the
 * transaction, which replays it. A key that a live request holds is a concurrent duplicate: 409, as the
 * transaction would answer it, whatever the backlog.
 */
export async function gateOperation(s: ServiceContext, em: Em, key: string): Promise<void> {
  const customerId = tenantOf(em);
  const until = refusing.get(customerId);
  if (until === undefined) return;
  if (until < Date.now()) {
    refusing.delete(customerId);
    return;
  }
  const bound = s.config.maxPendingOperationsPerCustomer;
  const backlog = await customerBacklogAndKey(em, bound, key);
  if (backlog.keyAnswered) return;
  if (backlog.keyBusy) throw keyInUse();
  if (backlog.count < bound) {
    refusing.delete(customerId);
    return;
  }
  gateFor(customerId);
  throw backlogFull(bound, backlog);
}

function gateFor(customerId: string): void {
  if (refusing.size >= MAX_REFUSING) refusing.clear();
  refusing.set(customerId, Date.now() + GATE_MS);
}

function backlogFull(bound: number, backlog: Backlog): CambioError {
  const retryAfterSeconds = Math.min(
    MAX_RETRY_AFTER_SECONDS,
    Math.max(1, Math.ceil(backlog.oldestAgeSeconds / backlog.count)),
  );
  countRejection('backlog');
  return new CambioError(
    'RATE_LIMITED',
    `${backlog.count} operations of this customer wait to be started (at most ${bound}); retry after ` +
      `${retryAfterSeconds} s`,
    { retryAfterSeconds, pendingOperations: backlog.count },
  );
}
