// Decision 0034: an RS256 verification costs ~0.1-0.3 ms of CPU, and a client reuses its token
// for up to an hour; verifying it again on every call was the largest single item of a cached read's CPU.

/** How many verified tokens one API process remembers: far above the clients it serves within a token's life. */
export const MAX_VERIFIED_TOKENS = 10_000;

/** What a valid token says: whose it is and when it was issued (`iat`, seconds). */
export interface VerifiedToken {
  customerId: string;
  issuedAt: number;
}

interface Verified {
  token: VerifiedToken;
  /** The token's own `exp`, in ms: the entry is never used at or past it. */
  expiresAtMs: number;
}

/**
 * Tokens this process has verified (signature, algorithm, issuer, audience, expiry), by their exact string, until
 * their own expiry: a token's claims cannot change without changing the string, so a hit is what a fresh
 * verification would return. Least recently used first out when full. Failures are never cached (each bad token
 * pays for its own verification, and the token endpoint's throttle bounds how fast good ones appear). The
 * customer-active check is NOT part of this: it runs on every request after this (CustomerAccess).
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, Verified>();

  constructor(
    private readonly max = MAX_VERIFIED_TOKENS,
    private readonly now: () => number = Date.now,
  ) {}

  /** What a token verified before and not yet expired says; undefined otherwise. */
  get(token: string): VerifiedToken | undefined {
    const hit = this.entries.get(token);
    if (!hit) return undefined;
    this.entries.delete(token);
    if (hit.expiresAtMs <= this.now()) return undefined;
    this.entries.set(token, hit); // most recently used goes last
    return hit.token;
  }

  remember(token: string, verified: VerifiedToken, expSeconds: number): void {
    if (this.max <= 0) return;
    this.entries.delete(token);
    while (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, { token: verified, expiresAtMs: expSeconds * 1000 });
  }

  get size(): number {
    return this.entries.size;
  }
}
