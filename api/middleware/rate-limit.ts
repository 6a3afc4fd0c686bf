import type Koa from 'koa';
import { CambioError } from '../errors';

export interface RateLimit {
  /** Sustained requests per second per customer. */
  perSecond: number;
  /** Requests a customer may send at once after being idle. */
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

// Buckets of customers idle this long are forgotten, so the map cannot grow without bound.
const IDLE_EVICT_MS = 60_000;

/**
 * A token bucket per customer, in this API process. It protects the service from one noisy client; it is not
 * a quota, so it does not need to be shared between instances (docs/decisions.md).
 */
export function customerRateLimiter(limit: RateLimit, now: () => number = Date.now) {
  const buckets = new Map<string, Bucket>();
  let lastSweep = now();

  return function take(ctx: Koa.Context): void {
    const customerId: string = ctx.state.customerId;
    const t = now();
    if (t - lastSweep > IDLE_EVICT_MS) {
      for (const [id, b] of buckets) if (t - b.at > IDLE_EVICT_MS) buckets.delete(id);
      lastSweep = t;
    }
    const bucket = buckets.get(customerId) ?? { tokens: limit.burst, at: t };
    bucket.tokens = Math.min(limit.burst, bucket.tokens + ((t - bucket.at) / 1000) * limit.perSecond);
    bucket.at = t;
    buckets.set(customerId, bucket);
    if (bucket.tokens < 1) {
      const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / limit.perSecond));
      throw new CambioError('RATE_LIMITED', 'too many requests; slow down', { retryAfterSeconds });
    }
    bucket.tokens -= 1;
  };
}
