// A client secret checked right once is not hashed again for a while (decision 0248). Each check is one scrypt
// (16 MiB, tens of ms) and the process runs two at a time for every customer together (services/secret-work.ts): a
// customer that asked for a token per call from a handful of addresses, each within its own rate, kept both busy and
// another customer's token request waited seconds behind it. A repeat of a secret already verified against the same
// stored hash now costs one HMAC.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Stored hashes remembered: far above the clients one process serves within the window. */
export const MAX_VERIFIED_SECRETS = 10_000;
/** How long a verified secret is taken on trust without scrypt. A rotation changes the stored hash: no wait there. */
export const VERIFIED_SECRET_MS = 15 * 60 * 1000;

interface Verified {
  mac: Buffer;
  expiresAtMs: number;
}

/**
 * By stored hash (the whole `scrypt$salt$hash` string), the HMAC of the secret that matched it, under a key of this
 * process that never leaves it. Only matches are kept, so a wrong secret always pays its scrypt (and the token
 * throttle's failure budgets); a new stored hash (rotation) or the end of the window sends the next check to scrypt.
 */
export class VerifiedSecrets {
  private readonly key = randomBytes(32);
  private readonly entries = new Map<string, Verified>();

  constructor(
    private readonly max = MAX_VERIFIED_SECRETS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether this secret matched this stored hash within the window. */
  has(stored: string, secret: string): boolean {
    const hit = this.entries.get(stored);
    if (!hit) return false;
    if (hit.expiresAtMs <= this.now()) {
      this.entries.delete(stored);
      return false;
    }
    return timingSafeEqual(hit.mac, this.mac(secret));
  }

  remember(stored: string, secret: string): void {
    if (this.max <= 0) return;
    this.entries.delete(stored);
    while (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(stored, { mac: this.mac(secret), expiresAtMs: this.now() + VERIFIED_SECRET_MS });
  }

  private mac(secret: string): Buffer {
    return createHmac('sha256', this.key).update(secret).digest();
  }
}
