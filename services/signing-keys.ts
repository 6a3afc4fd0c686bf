import { generateKeyPairSync, createPublicKey, randomUUID, KeyObject, createPrivateKey } from 'node:crypto';
import type { Orm } from '../db/orm';
import { oldestOrNewSigningKey } from '../db/repositories/signing-keys';

export interface KeyPair {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/**
 * The token signing key: JWT_PRIVATE_KEY/JWT_PUBLIC_KEY when configured, otherwise generated once and kept
 * in Postgres so every API instance (and a restart) signs and verifies with the same pair; two instances starting
 * together agree on one key (db/repositories/signing-keys.ts).
 */
export async function loadSigningKey(orm: Orm, env: NodeJS.ProcessEnv = process.env): Promise<KeyPair> {
  if (env.JWT_PRIVATE_KEY && env.JWT_PUBLIC_KEY) {
    return {
      kid: env.JWT_KEY_ID || 'configured',
      privateKey: createPrivateKey(env.JWT_PRIVATE_KEY),
      publicKey: createPublicKey(env.JWT_PUBLIC_KEY),
    };
  }
  const row = await oldestOrNewSigningKey(orm, () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return {
      kid: randomUUID(),
      privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    };
  });
  return { kid: row.kid, privateKey: createPrivateKey(row.privatePem), publicKey: createPublicKey(row.publicPem) };
}

export function jwks(key: KeyPair) {
  const jwk = key.publicKey.export({ format: 'jwk' });
  return { keys: [{ ...jwk, kid: key.kid, alg: 'RS256', use: 'sig' }] };
}
