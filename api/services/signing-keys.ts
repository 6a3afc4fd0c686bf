import { generateKeyPairSync, createPublicKey, randomUUID, KeyObject, createPrivateKey } from 'node:crypto';
import type { Orm } from '../../db/orm';
import { SigningKeySchema } from '../../db/entities';

export interface KeyPair {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/**
 * The token signing key: JWT_PRIVATE_KEY/JWT_PUBLIC_KEY when configured, otherwise generated once and kept
 * in Postgres so every API instance (and a restart) signs and verifies with the same pair. A transaction-scoped
 * advisory lock makes two instances starting together agree on one key: the second waits, then re-reads.
 */
export async function loadSigningKey(orm: Orm, env: NodeJS.ProcessEnv = process.env): Promise<KeyPair> {
  if (env.JWT_PRIVATE_KEY && env.JWT_PUBLIC_KEY) {
    return { kid: env.JWT_KEY_ID || 'configured', privateKey: createPrivateKey(env.JWT_PRIVATE_KEY), publicKey: createPublicKey(env.JWT_PUBLIC_KEY) };
  }
  const em = orm.em.fork();
  const row = await em.transactional(async (tx) => {
    // tx.execute, not tx.getConnection().execute: the latter takes another pooled connection, outside this
    // transaction, where the xact lock is released as soon as it is granted (two processes then both create a key).
    // Held until COMMIT, the lock makes the second process wait and then read the first one's key.
    await tx.execute(`select pg_advisory_xact_lock(hashtext('cambio:signing-key'))`);
    const existing = await tx.find(SigningKeySchema, {}, { orderBy: { createdAt: 'asc' }, limit: 1 });
    if (existing[0]) return existing[0];
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const created = tx.create(SigningKeySchema, {
      kid: randomUUID(),
      privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      createdAt: new Date(),
    });
    return created;
  });
  return { kid: row.kid, privateKey: createPrivateKey(row.privatePem), publicKey: createPublicKey(row.publicPem) };
}

export function jwks(key: KeyPair) {
  const jwk = key.publicKey.export({ format: 'jwk' });
  return { keys: [{ ...jwk, kid: key.kid, alg: 'RS256', use: 'sig' }] };
}
