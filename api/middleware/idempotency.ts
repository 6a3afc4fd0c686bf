import { createHash } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Em } from '../../db/orm';
import { addStoreResponse, lockKey, requireStored, storeResponse } from '../../db/repositories/idempotency';
import type { SqlBatch, Statement } from '../../db/batch';
import { inOpenSavepoint, inTransaction } from '../../db/transaction';
import { CambioError, errorBody, statusOf } from '../errors';
import { crashPoint } from './crash-point';
import { countIdempotentReplay } from '../observability/metrics';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Key order must not change the hash: `{a,b}` and `{b,a}` are the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function requireIdempotencyKey(ctx: Koa.Context): string {
  const key = ctx.get('X-Idempotency-Key');
  if (!key) throw new CambioError('MISSING_IDEMPOTENCY_KEY', 'X-Idempotency-Key header (a UUID) is required on POST, PUT and PATCH');
  if (!UUID.test(key)) {
    throw new CambioError('VALIDATION_ERROR', 'X-Idempotency-Key must be a UUID', { errors: [{ path: '/headers/x-idempotency-key', message: 'must be a UUID' }] });
  }
  return key.toLowerCase();
}

/**
 * A UUID fixed by (customer, idempotency key, purpose): what a handler names a row it must commit before an
 * outside effect (a signal), so that the retry of a request that died after that commit finds its own row
 * instead of writing a second one.
 */
export function requestScopedId(ctx: Koa.Context, purpose: string): string {
  const hex = createHash('sha256').update(`${ctx.state.customerId}:${ctx.state.idempotencyKey}:${purpose}`).digest('hex');
  // Shaped as a version-5-style UUID (name-based), so it passes every uuid column and check.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const keyInUse = () => new CambioError('IDEMPOTENCY_KEY_IN_USE', 'a request with this X-Idempotency-Key is still being processed');
export const keyReused = () => new CambioError('IDEMPOTENCY_KEY_REUSED', 'this X-Idempotency-Key was used for a different request');

/** What makes two requests with one key "the same request": method, path and the canonical body. */
export function requestHashOf(ctx: Koa.Context): string {
  return createHash('sha256').update(`${ctx.method} ${ctx.path}\n${canonical(ctx.request.body)}`).digest('hex');
}

/** Answers a stored response again, marked as a replay. */
export function answerReplay(ctx: Koa.Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.body = body;
  ctx.set('Idempotent-Replayed', 'true');
  countIdempotentReplay();
}

// A 503 is not an answer to the request, only to this attempt: the retry with the same key must run it.
const isStoredError = (err: unknown): err is CambioError =>
  err instanceof CambioError && err.code !== 'INTERNAL_ERROR' && err.code !== 'VALIDATION_ERROR' && err.code !== 'SERVICE_UNAVAILABLE';

const HANDLER_SAVEPOINT = 'cambio_handler';

/** The request `idempotent` runs, as `storeInBatch` needs it. */
interface IdempotentRequest {
  customerId: string;
  key: string;
  requestHash: string;
  savepoint: boolean;
  /** Set by `storeInBatch` in the current attempt. */
  answerInBatch?: { status: number; body: unknown; stored: Statement };
}

/**
 * For a handler that knows its answer before its last write batch runs (an operation's creation): the stored
 * response joins that batch instead of taking a round trip of its own after it, so the rows the batch locks (a
 * balance) are also held one round trip less. Returns what the handler calls with its batch and its answer; it
 * must then answer exactly that (this status and the same body object), which `idempotent` checks. A business
 * error after it rolls the stored answer back with the rest of the savepoint. Outside `idempotent` (a service
 * called by a test or the CLI), or in a handler run without the savepoint, it does nothing and the answer is
 * stored as usual.
 */
export function storeInBatch(ctx: Koa.Context, status: number): (batch: SqlBatch, body: unknown) => void {
  return (batch, body) => {
    const request = ctx.state.idempotentRequest as IdempotentRequest | undefined;
    if (!request?.savepoint) return;
    const stored = addStoreResponse(batch, request.customerId, request.key, { requestHash: request.requestHash, status, body });
    request.answerInBatch = { status, body, stored };
  };
}

type Outcome = { kind: 'replay'; status: number; body: unknown } | { kind: 'done' } | { kind: 'failed'; error: CambioError };

/**
 * Runs a mutating handler at most once per (customer, key), in ONE transaction with its result:
 *   BEGIN → advisory lock on the key (taken: 409 IDEMPOTENCY_KEY_IN_USE, nothing stored) → stored response?
 *   replay it (other request: 422 IDEMPOTENCY_KEY_REUSED) : SAVEPOINT (same round trip as the lock) → handler
 *   → store the response (or the handler stored it with its last writes: `storeInBatch`) → COMMIT (which wakes
 *   the worker's relay for the workflow starts it wrote).
 * A business error rolls back to the savepoint and its response is stored and committed (one round trip); a 5xx
 * rolls back everything and stores nothing. A crash before COMMIT leaves nothing (the lock dies with the
 * connection), a crash after it leaves the result: a retry with the key replays it or runs for the first time, at
 * once.
 * A deadlock or serialization failure runs the whole transaction again (`inTransaction`), and so does the rare
 * key that another request committed between our look-up and our lock (`storeResponse`): the rerun replays it.
 * The quote keeps the same guarantees in a single statement (db/repositories/quote-once.ts).
 * Services see the request's transaction as `ctx.state.em`; their own `inTransaction` calls nest as savepoints.
 */
export interface IdempotentOptions {
  log?: Logger;
  /**
   * False for a handler whose business errors are all thrown before its only write, which is its last statement
   * (the quote insert): a business error then leaves nothing to roll back, so the savepoint buys nothing. Any
   * other handler keeps the savepoint (the default).
   */
  savepoint?: boolean;
}

export async function idempotent(ctx: Koa.Context, key: string, handler: () => Promise<void>, opts: IdempotentOptions = {}): Promise<void> {
  const { log } = opts;
  const savepoint = opts.savepoint ?? true;
  const customerId: string = ctx.state.customerId;
  const requestEm: Em = ctx.state.em;
  const requestHash = requestHashOf(ctx);
  ctx.state.idempotencyKey = key;
  const request: IdempotentRequest = { customerId, key, requestHash, savepoint };
  ctx.state.idempotentRequest = request;
  let outcome: Outcome;
  try {
    outcome = await inTransaction(
      requestEm,
      async (tx): Promise<Outcome> => {
        request.answerInBatch = undefined;
        // The handler's savepoint opens in the lock's round trip and is never released (db/transaction.ts).
        const lock = await lockKey(tx, customerId, key, { thenSavepoint: savepoint ? HANDLER_SAVEPOINT : undefined });
        if (!lock.locked) throw keyInUse();
        if (lock.stored) {
          if (lock.stored.requestHash !== requestHash) throw keyReused();
          return { kind: 'replay', status: lock.stored.status, body: lock.stored.body };
        }
        try {
          if (savepoint) {
            await inOpenSavepoint(tx, async (inner) => {
              ctx.state.em = inner;
              await handler();
            });
          } else {
            ctx.state.em = tx;
            await handler();
          }
        } catch (err) {
          if (!isStoredError(err)) throw err;
          await storeResponse(tx, customerId, key, { requestHash, status: statusOf(err.code), body: errorBody(err) }, { afterRollbackTo: savepoint ? HANDLER_SAVEPOINT : undefined });
          return { kind: 'failed', error: err };
        }
        // Handlers answer through CambioError; a 5xx set by hand must not commit half a story.
        if (ctx.status >= 500) throw new Error(`handler answered ${ctx.status}`);
        // Set by the handler, if at all (TypeScript still sees the reset at the top of this attempt).
        const inBatch = request.answerInBatch as IdempotentRequest['answerInBatch'];
        if (!inBatch) await storeResponse(tx, customerId, key, { requestHash, status: ctx.status, body: ctx.body });
        else if (inBatch.status !== ctx.status || inBatch.body !== ctx.body) throw new Error('the handler answered other than what it stored');
        else requireStored(inBatch.stored);
        crashPoint('before-commit');
        return { kind: 'done' };
      },
      {
        onRetry: (err, attempt) => log?.warn({ err, attempt, requestId: ctx.state.requestId }, 'request transaction retried after a deadlock or serialization failure'),
      },
    );
  } finally {
    ctx.state.em = requestEm;
    ctx.state.idempotentRequest = undefined;
  }
  crashPoint('after-commit');
  if (outcome.kind === 'failed') throw outcome.error;
  if (outcome.kind === 'replay') answerReplay(ctx, outcome.status, outcome.body);
}
