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
    const privateKey = createPrivateKey(env.JWT_PRIVATE_KEY);
    const publicKey = createPublicKey(env.JWT_PUBLIC_KEY);
    assertUsablePair(privateKey, publicKey);
    return { kid: env.JWT_KEY_ID || 'configured', privateKey, publicKey };
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

/**
 * Refuses at start a configured pair the API could not use (decision 0202): one that cannot sign RS256 (jsonwebtoken
 * throws at every token request) or whose public half is another key's (every token issued is then refused).
 */
function assertUsablePair(privateKey: KeyObject, publicKey: KeyObject): void {
  const bits = privateKey.asymmetricKeyDetails?.modulusLength ?? 0;
  if (privateKey.asymmetricKeyType !== 'rsa' || bits < 2048)
    throw new Error('JWT_PRIVATE_KEY must be an RSA key of 2048 bits or more: tokens are signed RS256');
  const spki = (k: KeyObject) => k.export({ type: 'spki', format: 'der' });
  if (!spki(createPublicKey(privateKey)).equals(spki(publicKey)))
    throw new Error('JWT_PUBLIC_KEY is not the public key of JWT_PRIVATE_KEY: no token issued would verify');
}
