import type { Orm } from '../db/orm';
import { isCustomerActive } from '../db/repositories/customers';
import { isUuid } from '../domain/uuid';

// Bounds the cache's memory; far above the customers one API process serves within a cache lifetime.
const MAX_CACHED_CUSTOMERS = 10_000;

/**
 * Whether a customer may act: it exists and is not disabled. Every authenticated request asks, so the answer is
 * kept in process for `cacheSeconds` (the revocation lag: a disable takes effect on every API process within it)
 * and concurrent requests of one customer share a single lookup. The one place this rule lives.
 */
export class CustomerAccess {
  private readonly known = new Map<string, { active: boolean; until: number }>();
  private readonly pending = new Map<string, Promise<boolean>>();

  constructor(
    private readonly orm: Orm,
    private readonly cacheSeconds: number,
  ) {}

  async isActive(customerId: string): Promise<boolean> {
    if (!isUuid(customerId)) return false;
    const hit = this.known.get(customerId);
    if (hit && hit.until > Date.now()) return hit.active;
    let lookup = this.pending.get(customerId);
    if (!lookup) {
      lookup = this.lookup(customerId).finally(() => this.pending.delete(customerId));
      this.pending.set(customerId, lookup);
    }
    return lookup;
  }

  private async lookup(customerId: string): Promise<boolean> {
    const active = await isCustomerActive(this.orm.em.fork(), customerId);
    if (this.cacheSeconds > 0) {
      this.known.delete(customerId);
      if (this.known.size >= MAX_CACHED_CUSTOMERS) this.known.delete(this.known.keys().next().value!);
      this.known.set(customerId, { active, until: Date.now() + this.cacheSeconds * 1000 });
    }
    return active;
  }
}
