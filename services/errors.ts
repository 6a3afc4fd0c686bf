// The errors the use cases throw beyond domain/errors.ts's (CambioError, notFound, validationError): a key another
// request holds or used, and a dependency that is down. api/errors.ts maps each code to its HTTP status; the CLI
// and the worker read them too, so they live outside api/.
import { CambioError } from '../domain/errors';

export const keyInUse = () =>
  new CambioError('IDEMPOTENCY_KEY_IN_USE', 'a request with this X-Idempotency-Key is still being processed');
export const keyReused = () =>
  new CambioError('IDEMPOTENCY_KEY_REUSED', 'this X-Idempotency-Key was used for a different request');

// Postgres SQLSTATEs that say "not now" rather than "wrong": the server is shutting down or starting (57P01-57P03),
// the connection failed (class 08), it is out of a resource (class 53: disk full, memory or the lock table, too
// many connections), it is a standby after a failover (25006, read-only), our own bounds fired (lock_timeout
// 55P03, statement_timeout 57014, idle_in_transaction_session_timeout 25P03), or a lock conflict outlived
// `inTransaction`'s retries (40P01, 40001; decision 0333). A request that met one did not commit.
const PG_UNAVAILABLE = /^(57P0[1-3]|08...|53...|25006|55P03|57014|25P03|40P01|40001)$/;
// Socket errors of a dependency that went away or never answered.
const NET_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// Messages of node-postgres, knex and tarn that carry no code: a connection ended under a query, or the pool had
// no connection to give within its acquire timeout.
const MESSAGE_UNAVAILABLE = new RegExp(
  [
    'Connection terminated',
    'connection timeout',
    // node-postgres: a new connection did not open within connectionTimeoutMillis.
    '^timeout expired$',
    'Timeout acquiring a connection',
    'Client has encountered a connection error',
    'Connection ended unexpectedly',
    'terminating connection',
    // node-postgres: no answer within query_timeout (db/session-settings.ts), a Postgres that stopped answering;
    // knex puts the statement in front (`select ... - Query read timeout`), and MikroORM keeps that message.
    '(^| - )Query read timeout$',
  ].join('|'),
  'i',
);
// gRPC status codes of the Temporal client: UNAVAILABLE (14), DEADLINE_EXCEEDED (4), RESOURCE_EXHAUSTED (8).
const GRPC_UNAVAILABLE = new Set([4, 8, 14]);

/** Seconds a client is told to wait before retrying after a dependency failure: about one restart's worth. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/**
 * The 503 a dependency failure is answered with, or undefined when `err` is not one. Looks through `cause` and
 * AggregateError members, as MikroORM, the Temporal client and our own wrappers nest the original error.
 */
export function dependencyFailure(err: unknown): CambioError | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0 && seen.size < 20) {
    const e = queue.shift() as
      { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; name?: unknown } | undefined;
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const code = e.code;
    const hit =
      (typeof code === 'string' && (PG_UNAVAILABLE.test(code) || NET_UNAVAILABLE.has(code))) ||
      (typeof code === 'number' &&
        GRPC_UNAVAILABLE.has(code) &&
        (e.name === 'ServiceError' || 'details' in e || 'metadata' in e)) ||
      e.name === 'KnexTimeoutError' ||
      // A Temporal namespace that does not exist (TEMPORAL_NAMESPACE misspelt, or not created yet): not the request's
      // fault, and gone once the deployment is mended; /readyz says so too (api/readiness.ts).
      e.name === 'NamespaceNotFoundError' ||
      e.name === 'ConnectionException' ||
      (typeof e.message === 'string' && MESSAGE_UNAVAILABLE.test(e.message));
    if (hit) {
      return new CambioError(
        'SERVICE_UNAVAILABLE',
        'a service this request needs is unavailable; retry with the same X-Idempotency-Key',
        {
          retryAfterSeconds: SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS,
        },
      );
    }
    queue.push(e.cause);
    if (Array.isArray(e.errors)) queue.push(...e.errors);
  }
  return undefined;
}
