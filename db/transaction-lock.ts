// A lock named by text and held until the caller's transaction ends: Postgres' transaction advisory lock, keyed by the
// 64-bit hash of the name. The one way the repositories serialise work that has no row of its own to lock (a count
// under a cap, a decision's target, a payer's matching, a transfer id).
import type { Em } from './orm';

/** Waits for, then holds until `em`'s transaction ends, the lock named `name` (e.g. `cambio:documents:<customer>`). */
export async function lockUntilTransactionEnds(em: Em, name: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [name]);
}
