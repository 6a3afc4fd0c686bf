import type Koa from 'koa';
import { CambioError } from '../../domain/errors';
import { countRejection, RejectionKind } from '../../services/metrics';
import { TokenBuckets } from './token-bucket';

export interface TokenThrottleLimits {
  /** Failed attempts per minute for one client id (also the burst). */
  clientFailuresPerMinute: number;
  /** Failed attempts per minute from one address (also the burst). */
  addressFailuresPerMinute: number;
  /** Attempts per second from one address, failed or not (burst: twice that). */
  addressPerSecond: number;
}

/** An admitted attempt: its reserved failure is kept when the secret was wrong, given back otherwise. */
export interface TokenAttempt {
  /** The secret was right (or the attempt was never checked): the reserved failure is given back. */
  release(): void;
}

/**
 * The token endpoint's throttle, in this process: per address, a rate on every attempt; per (client id, address)
 * and per address, a budget of failed attempts. It is checked before any secret is hashed, so a refused attempt
 * costs no scrypt. An admitted attempt reserves a failure in both budgets before its check and gives it back when
 * the secret was right: checks still running count as failures, so concurrent guesses cannot overrun the budget,
 * and every 429's `Retry-After` is the real wait for the next attempt to be checked. Failures are counted per
 * client and address, so guessing a client's secret from one address never locks its owner out elsewhere.
 */
export class TokenThrottle {
  private readonly pairFailures: TokenBuckets;
  private readonly addressFailures: TokenBuckets;
  private readonly addressAttempts: TokenBuckets;

  constructor(limits: TokenThrottleLimits, now: () => number = Date.now) {
    this.pairFailures = new TokenBuckets(
      { perSecond: limits.clientFailuresPerMinute / 60, burst: limits.clientFailuresPerMinute },
      now,
    );
    this.addressFailures = new TokenBuckets(
      { perSecond: limits.addressFailuresPerMinute / 60, burst: limits.addressFailuresPerMinute },
      now,
    );
    this.addressAttempts = new TokenBuckets(
      { perSecond: limits.addressPerSecond, burst: limits.addressPerSecond * 2 },
      now,
    );
  }

  /**
   * Admits an attempt (reserving its failure) or throws 429 with the longest of the waits that refuse this client
   * and address, so the right secret sent after `Retry-After` is checked. Nothing is stored for a refused attempt,
   * so a flood of made-up client ids from one address grows the maps no faster than the address's own budgets.
   */
  admit(clientId: string, address: string): TokenAttempt {
    const pair = pairKey(clientId, address);
    const byAddress = this.addressFailures.peek(address);
    const byPair = this.pairFailures.peek(pair);
    const attempts =
      byAddress > 0 || byPair > 0 ? this.addressAttempts.peek(address) : this.addressAttempts.take(address);
    const wait = Math.max(byAddress, byPair, attempts);
    if (wait > 0) {
      if (byAddress > 0 || (attempts > 0 && byPair === 0))
        throw rejected(
          'token_address',
          `too many ${byAddress > 0 ? 'failed ' : ''}token requests from this address`,
          wait,
        );
      throw rejected('token_client', 'too many failed token requests for this client from this address', wait);
    }
    this.pairFailures.take(pair);
    this.addressFailures.take(address);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.pairFailures.refund(pair);
        this.addressFailures.refund(address);
      },
    };
  }

  /** The wait to tell an attempt refused for another reason (the secret checks are busy): what admit would say. */
  retryAfter(clientId: string, address: string): number {
    return Math.max(1, this.pairFailures.peek(pairKey(clientId, address)), this.addressFailures.peek(address));
  }

  /** Entries held in memory across the throttle's maps (tests: bounded whatever the client ids). */
  entries(): number {
    return this.pairFailures.size + this.addressFailures.size + this.addressAttempts.size;
  }
}

// NUL cannot occur in an address, so no (client id, address) pair can be spelled as another.
const pairKey = (clientId: string, address: string) => `${address}\u0000${clientId}`;

/**
 * The address a throttle should key on. Behind a proxy (`app.proxy`), the last X-Forwarded-For entry is the one
 * our own proxy appended, so a client cannot pick its key by sending a header; without a proxy, the socket.
 */
export function clientAddress(ctx: Koa.Context): string {
  // app.proxy is TRUST_PROXY (api/app.ts): off unless a proxy that sets the header stands in front.
  const forwarded = ctx.app.proxy
    ? ctx
        .get('X-Forwarded-For')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
  return forwarded.at(-1) ?? ctx.socket.remoteAddress ?? 'unknown';
}

function rejected(kind: RejectionKind, message: string, retryAfterSeconds: number): CambioError {
  countRejection(kind);
  return new CambioError('RATE_LIMITED', message, { retryAfterSeconds });
}
