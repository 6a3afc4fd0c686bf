import { createHash } from 'node:crypto';
import type Koa from 'koa';
import type { Em } from '../../db/orm';
import { claimKey, completeKey, releaseKey } from '../../db/repositories/idempotency';
import { CambioError, statusOf } from '../errors';
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
 * Runs a mutating handler at most once per (customer, key). Same key and same request: the stored status
 * and body replay with `Idempotent-Replayed: true`. Same key, other request: 422. Still running: 409.
 * Stored: 2xx and business 4xx. Released (client may retry): 5xx. Schema 400s never reach here.
 */
export async function idempotent(ctx: Koa.Context, key: string, handler: () => Promise<void>): Promise<void> {
  const customerId: string = ctx.state.customerId;
  const em: Em = ctx.state.em;
  const hash = createHash('sha256').update(`${ctx.method} ${ctx.path}\n${canonical(ctx.request.body)}`).digest('hex');
  const claim = await claimKey(em, customerId, key, hash);
  if (claim.kind !== 'claimed') {
    if (!claim.sameRequest) throw new CambioError('IDEMPOTENCY_KEY_REUSED', 'this X-Idempotency-Key was used for a different request');
    if (claim.kind === 'in-progress') throw new CambioError('IDEMPOTENCY_KEY_IN_USE', 'a request with this X-Idempotency-Key is still being processed');
    ctx.status = claim.status;
    ctx.body = claim.body;
    ctx.set('Idempotent-Replayed', 'true');
    countIdempotentReplay();
    return;
  }
  try {
    await handler();
  } catch (err) {
    if (err instanceof CambioError && err.code !== 'INTERNAL_ERROR' && err.code !== 'VALIDATION_ERROR') {
      await completeKey(em, customerId, key, statusOf(err.code), { code: err.code, message: err.message, details: err.details });
    } else {
      await releaseKey(em, customerId, key);
    }
    throw err;
  }
  if (ctx.status >= 500) await releaseKey(em, customerId, key);
  else await completeKey(em, customerId, key, ctx.status, ctx.body);
}
