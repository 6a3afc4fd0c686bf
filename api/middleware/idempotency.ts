import { createHash } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Em } from '../../db/orm';
import { lockKey, storeResponse } from '../../db/repositories/idempotency';
import { inTransaction } from '../../db/transaction';
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

const isStoredError = (err: unknown): err is CambioError => err instanceof CambioError && err.code !== 'INTERNAL_ERROR' && err.code !== 'VALIDATION_ERROR';

type Outcome = { kind: 'replay'; status: number; body: unknown } | { kind: 'done' } | { kind: 'failed'; error: CambioError };

/**
 * Runs a mutating handler at most once per (customer, key), in ONE transaction with its result:
 *   BEGIN → advisory lock on the key (taken: 409 IDEMPOTENCY_KEY_IN_USE, nothing stored) → stored response?
 *   replay it (other request: 422 IDEMPOTENCY_KEY_REUSED) : SAVEPOINT → handler → RELEASE → store the response
 *   → COMMIT → after-commit hooks (workflow starts).
 * A business error rolls back to the savepoint and its response is stored and committed; a 5xx rolls back
 * everything and stores nothing. A crash before COMMIT leaves nothing (the lock dies with the connection), a
 * crash after it leaves the result: a retry with the key replays it or runs for the first time, at once.
 * A deadlock or serialization failure runs the whole transaction again (`inTransaction`), and so does the rare
 * key that another request committed between our look-up and our lock (`storeResponse`): the rerun replays it.
 * The quote keeps the same guarantees in a single statement (db/repositories/quote-once.ts).
 * Services see the request's transaction as `ctx.state.em`; their own `inTransaction` calls nest as savepoints.
 */
export interface IdempotentOptions {
  log?: Logger;
  /**
   * False for a handler whose business errors are all thrown before its only write, which is its last statement
   * (the quote insert): a business error then leaves nothing to roll back, so the SAVEPOINT and RELEASE round
   * trips buy nothing. Any other handler keeps the savepoint (the default).
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
  let outcome: Outcome;
  try {
    outcome = await inTransaction(
      requestEm,
      async (tx): Promise<Outcome> => {
        const lock = await lockKey(tx, customerId, key);
        if (!lock.locked) throw keyInUse();
        if (lock.stored) {
          if (lock.stored.requestHash !== requestHash) throw keyReused();
          return { kind: 'replay', status: lock.stored.status, body: lock.stored.body };
        }
        try {
          if (savepoint) {
            await inTransaction(tx, async (inner) => {
              ctx.state.em = inner;
              await handler();
            });
          } else {
            ctx.state.em = tx;
            await handler();
          }
        } catch (err) {
          if (!isStoredError(err)) throw err;
          await storeResponse(tx, customerId, key, { requestHash, status: statusOf(err.code), body: errorBody(err) });
          return { kind: 'failed', error: err };
        }
        // Handlers answer through CambioError; a 5xx set by hand must not commit half a story.
        if (ctx.status >= 500) throw new Error(`handler answered ${ctx.status}`);
        await storeResponse(tx, customerId, key, { requestHash, status: ctx.status, body: ctx.body });
        crashPoint('before-commit');
        return { kind: 'done' };
      },
      {
        onRetry: (err, attempt) => log?.warn({ err, attempt, requestId: ctx.state.requestId }, 'request transaction retried after a deadlock or serialization failure'),
        onHookError: (err) => log?.warn({ err, requestId: ctx.state.requestId }, 'after-commit action failed; its outbox row finishes it'),
      },
    );
  } finally {
    ctx.state.em = requestEm;
  }
  crashPoint('after-commit');
  if (outcome.kind === 'failed') throw outcome.error;
  if (outcome.kind === 'replay') answerReplay(ctx, outcome.status, outcome.body);
}
