import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Standard Webhooks secret: `whsec_` + base64 of 32 random bytes (decision 0028).
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

// How long the replaced secret keeps signing after a rotation, so receivers can switch over.
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/**
 * Secrets must be readable to sign, so they are encrypted rather than hashed: AES-256-GCM under a key derived
 * from WEBHOOK_SECRET_KEY. A database dump alone then signs nothing. Stored as `v1.<iv>.<tag>.<ciphertext>`.
 */
export function sealSecret(secret: string, key: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(key), iv);
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join('.');
}

export function openSecret(sealed: string, key: string): string {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || !data) throw new Error('unreadable webhook secret');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(key), Buffer.from(iv, 'base64'));
  decipher.setAuthTag(Buffer.from(tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
}

// Every attempt opens its subscription's secret: the key is derived once per WEBHOOK_SECRET_KEY, not per call.
const derivedKeys = new Map<string, Buffer>();
function keyOf(key: string): Buffer {
  let derived = derivedKeys.get(key);
  if (!derived) {
    derived = createHash('sha256').update(`cambio-webhook-secrets:${key}`).digest();
    derivedKeys.set(key, derived);
  }
  return derived;
}
