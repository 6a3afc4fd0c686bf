/** A token bucket's rule: `perSecond` tokens flow in, at most `burst` are kept. */
export interface BucketRule {
  perSecond: number;
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

// How often idle buckets are swept out, so the map cannot grow without bound.
const SWEEP_EVERY_MS = 60_000;

/**
 * Token buckets keyed by a string (customer id, client id, address), in this process only. `take` spends one
 * token and answers how many seconds to wait when there was none; `peek` answers the same without spending.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private lastSweep: number;

  constructor(
    private readonly rule: BucketRule,
    private readonly now: () => number = Date.now,
  ) {
    this.lastSweep = now();
  }

  /** Spends a token: 0 when there was one, else the whole seconds until one is back (at least 1). */
  take(key: string): number {
    const bucket = this.refill(key);
    if (bucket.tokens < 1) return this.waitSeconds(bucket);
    bucket.tokens -= 1;
    return 0;
  }

  /** Gives back a token `take` spent (an attempt reserved as a failure that succeeded or was never checked). */
  refund(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.rule.burst, bucket.tokens + 1);
  }

  /**
   * 0 when a token is available now, else the whole seconds until one is; spends nothing and stores nothing.
   * `after`: as if that many more tokens were spent first (attempts still being checked).
   */
  peek(key: string, after = 0): number {
    const bucket = this.buckets.has(key) ? this.refill(key) : { tokens: this.rule.burst, at: this.now() };
    // `take` spends only whole tokens and never goes below zero: failures past the last token add no wait.
    const tokens = bucket.tokens - Math.min(after, Math.floor(bucket.tokens));
    return tokens < 1 ? this.waitSeconds({ tokens, at: bucket.at }) : 0;
  }

  /** Keys held now (tests: memory stays bounded). */
  get size(): number {
    return this.buckets.size;
  }

  private waitSeconds(bucket: Bucket): number {
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.rule.perSecond));
  }

  private refill(key: string): Bucket {
    const t = this.now();
    if (t - this.lastSweep > SWEEP_EVERY_MS) {
      // A bucket idle long enough to be full again is the same as no bucket: forgetting it changes nothing.
      const fullAfterMs = (this.rule.burst / this.rule.perSecond) * 1000;
      for (const [k, b] of this.buckets) if (t - b.at >= fullAfterMs) this.buckets.delete(k);
      this.lastSweep = t;
    }
    const bucket = this.buckets.get(key) ?? { tokens: this.rule.burst, at: t };
    bucket.tokens = Math.min(this.rule.burst, bucket.tokens + ((t - bucket.at) / 1000) * this.rule.perSecond);
    bucket.at = t;
    this.buckets.set(key, bucket);
    return bucket;
  }
}
