import { CambioError, ErrorCode } from '../domain/errors';

export { CambioError, notFound, validationError } from '../domain/errors';

// The only place a code becomes an HTTP status (decisions 0001, 0032, 0064).
const STATUS: Record<ErrorCode, number> = {
  VALIDATION_ERROR: 400,
  INVALID_AMOUNT_PRECISION: 400,
  INVALID_AMOUNT: 400,
  INLINE_BENEFICIARY_NOT_SUPPORTED: 400,
  INVALID_FILTER: 400,
  INVALID_CURSOR: 400,
  INVALID_PERIOD: 400,
  MISSING_IDEMPOTENCY_KEY: 400,
  UNAUTHORIZED: 401,
  INVALID_CLIENT: 401,
  NOT_FOUND: 404,
  // A path some route serves, with a method none declares (api/middleware/method-not-allowed.ts): with `Allow`.
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_KEY_IN_USE: 409,
  QUOTE_ALREADY_CONSUMED: 409,
  INVALID_STATE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  QUOTE_EXPIRED: 422,
  QUOTE_NOT_FOUND: 422,
  QUOTE_ACCOUNT_MISMATCH: 422,
  INSUFFICIENT_FUNDS: 422,
  ACCOUNT_NOT_ACTIVE: 422,
  ASSET_NOT_ENABLED: 422,
  SAME_ACCOUNT_TRANSFER: 422,
  RAIL_ASSET_MISMATCH: 422,
  RAIL_NOT_CONFIGURED: 422,
  RAIL_REJECTED: 422,
  // A PSP notice with items the PSP's own record does not confirm (decision 0107): those are not recorded.
  NOTICE_NOT_CONFIRMED: 422,
  // A representation the resource has no valid form in (a stablecoin statement as camt.053): details name the others.
  FORMAT_NOT_SUPPORTED: 422,
  PAYMENT_INSTRUCTION_NOT_APPROVED: 422,
  REQUIREMENTS_NOT_MET: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  // Answered by api/client-error.ts for requests Node's HTTP parser refuses before Koa sees them.
  MALFORMED_REQUEST: 400,
  REQUEST_TIMEOUT: 408,
  HEADERS_TOO_LARGE: 431,
  INVALID_WEBHOOK_URL: 400,
  DELIVERY_IN_PROGRESS: 409,
  SUBSCRIPTION_DISABLED: 409,
  // Another customer's payment already has this rail reference; whose is not said.
  RAIL_REFERENCE_IN_USE: 409,
  // Postgres or Temporal could not be reached or gave up (see `dependencyFailure`): retry with the same key.
  SERVICE_UNAVAILABLE: 503,
  // No fresh market rate for a leg of a new quote (decision 0116): retry after the poll.
  RATES_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
};

export const statusOf = (code: ErrorCode): number => STATUS[code];

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
}

export const errorBody = (err: CambioError): ErrorBody => ({
  code: err.code,
  message: err.message,
  details: err.details,
});

// Postgres SQLSTATEs that say "not now" rather than "wrong": the server is shutting down or starting (57P01-57P03),
// the connection failed (class 08), too many connections (53300), our own bounds fired (lock_timeout 55P03,
// statement_timeout 57014, idle_in_transaction_session_timeout 25P03). A request that met one did not commit.
const PG_UNAVAILABLE = /^(57P0[1-3]|08...|53300|55P03|57014|25P03)$/;
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
    'Timeout acquiring a connection',
    'Client has encountered a connection error',
    'Connection ended unexpectedly',
    'terminating connection',
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
