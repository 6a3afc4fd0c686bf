import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';

/**
 * The per-customer rate for the whole deployment: a counter shared by every API process (rate-limiter-flexible,
 * Postgres store) instead of a bucket per process, so N processes admit the documented rate, not N times it.
 *
 * A process does not ask Postgres once per request: it takes a share of the window's points at a time (a tenth,
 * at least 1) and spends it locally until the window ends, then asks again. That is one upsert per tenth of the
 * limit per process and window (at 1,800 requests/s of one customer with the limit lifted, one every 100 ms),
 * and the deployment can admit at most one unspent share per process more than the limit in a window.
 */
export class DeploymentRate {
  private readonly shares = new Map<string, { left: number; until: number }>();
  private readonly pending = new Map<string, Promise<number>>();
  private readonly share: number;

  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly points: number,
    private readonly now: () => number = Date.now,
  ) {
    this.share = Math.max(1, Math.floor(points / 10));
  }

  /** Spends one request of `key`'s rate: 0 when admitted, else the whole seconds until the window reopens. */
  async take(key: string): Promise<number> {
    for (;;) {
      const local = this.shares.get(key);
      if (local && local.until > this.now() && local.left > 0) {
        local.left -= 1;
        return 0;
      }
      // One request per key refills the share, and is admitted on it; the others wait for it and look again.
      const refill = this.pending.get(key);
      if (refill) {
        const wait = await refill;
        if (wait > 0) return wait;
        continue;
      }
      const next = this.refill(key).finally(() => this.pending.delete(key));
      this.pending.set(key, next);
      return next;
    }
  }

  /**
   * Takes a share from the shared counter, one point of it for the caller (0: admitted). The store adds what is
   * asked even when that passes the limit, so a refused share may still hold the last few points of the window:
   * those are granted, the rest of the window is refused (the counter is past the limit anyway). The store's window
   * is timed from the moment it was asked, not from its answer: a late answer (a stalled connection) must not let
   * the rest of a share be spent after its window ended, in a window that never counted it.
   */
  private async refill(key: string): Promise<number> {
    const asked = this.now();
    let share: { left: number; until: number };
    try {
      const res = await this.limiter.consume(key, this.share);
      share = { left: this.share, until: asked + res.msBeforeNext };
    } catch (rejected) {
      if (!isRateLimiterRes(rejected)) throw rejected;
      const granted = Math.max(0, this.points - (rejected.consumedPoints - this.share));
      if (granted === 0) return Math.max(1, Math.ceil(rejected.msBeforeNext / 1000));
      share = { left: granted, until: asked + rejected.msBeforeNext };
    }
    share.left -= 1;
    if (share.until > this.now()) this.shares.set(key, share);
    this.forgetExpired();
    return 0;
  }

  private forgetExpired(): void {
    if (this.shares.size < 1024) return;
    const t = this.now();
    for (const [k, s] of this.shares) if (s.until <= t) this.shares.delete(k);
  }
}

const isRateLimiterRes = (v: unknown): v is RateLimiterRes =>
  typeof v === 'object' && v !== null && 'msBeforeNext' in v && !(v instanceof Error);

/**
 * The shared counter's fixed window for a rate and a burst: `burst` points per `burst / perSecond` seconds (at
 * least 1 s), so a customer idle for a window may send `burst` at once and sustains `perSecond` on average. A fixed
 * window lets up to twice the burst through across a window boundary; the in-flight bound still applies.
 */
export function rateWindow(perSecond: number, burst: number): { points: number; seconds: number } {
  const seconds = Math.max(1, Math.round(burst / Math.max(1, perSecond)));
  return { points: Math.max(1, perSecond * seconds), seconds };
}
