import type { Orm } from '../db/orm';
import { customerStanding } from '../db/repositories/customers';
import { isUuid } from '../domain/uuid';

// Bounds the cache's memory; far above the customers one API process serves within a cache lifetime.
const MAX_CACHED_CUSTOMERS = 10_000;

/** A customer as the cache holds it: refused outright, or admitting tokens issued after `revokedUntil`. */
interface Standing {
  active: boolean;
  /** Tokens issued at or before this second (`iat`) were revoked by a disable (decision 0231); 0: none. */
  revokedUntil: number;
}

/**
 * Whether a customer's token may act: the customer exists, is not disabled, and did not revoke the token by a
 * disable after it was issued. Every authenticated request asks, so the answer is kept in process for
 * `cacheSeconds` from its read's start (the revocation lag: a disable takes effect on every API process within it)
 * and concurrent requests of one customer share a single lookup. The one place this rule lives.
 */
export class CustomerAccess {
  private readonly known = new Map<string, Standing & { until: number }>();
  private readonly pending = new Map<string, { lookup: Promise<Standing>; readAt: number }>();

  constructor(
    private readonly orm: Orm,
    private readonly cacheSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** `issuedAt`: the token's `iat`, in seconds. */
  async admits(customerId: string, issuedAt: number): Promise<boolean> {
    if (!isUuid(customerId)) return false;
    const { active, revokedUntil } = await this.standing(customerId);
    // `iat` has whole seconds: a token of the disable's own second counts as revoked (the customer was refused
    // tokens from that moment, so only a token that second's enable issued is refused wrongly, and asked again).
    return active && issuedAt > revokedUntil;
  }

  private standing(customerId: string): Promise<Standing> {
    const hit = this.known.get(customerId);
    if (hit && hit.until > this.now()) return Promise.resolve(hit);
    // A read under way answers this request too, if it began within the cache's lifetime: the same age a cached
    // answer may have. With CUSTOMER_CACHE_SECONDS=0 every request reads for itself, as the setting promises.
    const shared = this.pending.get(customerId);
    if (shared && shared.readAt + this.cacheSeconds * 1000 > this.now()) return shared.lookup;
    const readAt = this.now();
    const pending = {
      lookup: this.lookup(customerId, readAt).finally(() => {
        if (this.pending.get(customerId) === pending) this.pending.delete(customerId);
      }),
      readAt,
    };
    this.pending.set(customerId, pending);
    return pending.lookup;
  }

  /**
   * The answer is as old as the read's start (`readAt`), not its end: a read that took long (a stalled connection, a
   * frozen process) may bring back a standing from before a disable, and it must not be trusted for a whole lifetime
   * more. So the lag stays CUSTOMER_CACHE_SECONDS however long reads take.
   */
  private async lookup(customerId: string, readAt: number): Promise<Standing> {
    const found = await customerStanding(this.orm.em.fork(), customerId);
    const standing = {
      active: found !== undefined && !found.disabled,
      revokedUntil: found?.tokensRevokedAt ? Math.floor(found.tokensRevokedAt.getTime() / 1000) : 0,
    };
    const until = readAt + this.cacheSeconds * 1000;
    if (until > this.now()) {
      this.known.delete(customerId);
      if (this.known.size >= MAX_CACHED_CUSTOMERS) this.known.delete(this.known.keys().next().value!);
      this.known.set(customerId, { ...standing, until });
    }
    return standing;
  }
}
