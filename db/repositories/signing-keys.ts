/**
 * The API's token signing keys (table `signing_keys`). Through the ORM in one transaction of a fresh
 * EntityManager, with a transaction-scoped advisory lock (`em.execute`). Tenant: none; the key is the
 * installation's, not a customer's.
 */
import { inTransaction } from '../transaction';
import { SigningKey, SigningKeySchema } from '../entities';
import type { Orm } from '../orm';

/** The pair to store when there is none yet, as PEM texts. */
export interface NewSigningKey {
  kid: string;
  privatePem: string;
  publicPem: string;
}

/**
 * The oldest stored key, or the one `generate` makes, stored. Two processes starting together agree on one key:
 * the advisory lock, held until COMMIT, makes the second wait and then read the first one's key.
 */
export async function oldestOrNewSigningKey(orm: Orm, generate: () => NewSigningKey): Promise<SigningKey> {
  return inTransaction(orm.em.fork(), async (tx) => {
    // tx.execute, not tx.getConnection().execute: the latter takes another pooled connection, outside this
    // transaction, where the xact lock is released as soon as it is granted (two processes then both create a key).
    await tx.execute(`select pg_advisory_xact_lock(hashtext('cambio:signing-key'))`);
    const existing = await tx.find(SigningKeySchema, {}, { orderBy: { createdAt: 'asc' }, limit: 1 });
    if (existing[0]) return existing[0];
    return tx.create(SigningKeySchema, { ...generate(), createdAt: new Date() });
  });
}
