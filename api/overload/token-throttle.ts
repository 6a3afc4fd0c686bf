import type Koa from 'koa';
import { CambioError } from '../errors';
import { countRejection, RejectionKind } from '../observability/metrics';
import { Semaphore } from './semaphore';
import { TokenBuckets } from './token-bucket';

export interface TokenThrottleLimits {
  /** Failed attempts per minute for one client id (also the burst). */
  clientFailuresPerMinute: number;
  /** Failed attempts per minute from one address (also the burst). */
  addressFailuresPerMinute: number;
  /** Attempts per second from one address, failed or not (burst: twice that). */
  addressPerSecond: number;
}

// Each secret check is one scrypt (16 MiB, tens of ms on libuv's 4-thread pool, which DNS and file I/O share).
// Two at a time leave the pool room for everything else; a flood past 32 waiting is refused rather than queued.
const SCRYPT_CONCURRENCY = 2;
const SCRYPT_QUEUE = 32;

const scryptWork = new Semaphore(SCRYPT_CONCURRENCY, SCRYPT_QUEUE);

/**
 * Runs a secret hash or check under the process-wide bound on concurrent scrypt work; 429 RATE_LIMITED when
 * too many are already waiting (the token endpoint's only expensive step, so a flood cannot starve the rest).
 */
export function boundedSecretWork<T>(work: () => Promise<T>): Promise<T> {
  return scryptWork.run(work, () => rejected('token_concurrency', 'the token endpoint is busy; retry shortly', 1));
}

/**
 * The token endpoint's throttle, in this process: per address, a rate on every attempt; per client id and per
 * address, a budget of failed attempts. It is checked before any secret is hashed, so a refused attempt costs
 * no scrypt. Only failures spend the client budget, so a correct secret keeps working until someone (maybe an
 * attacker) has failed for that client id `clientFailuresPerMinute` times in a row within the minute.
 */
export class TokenThrottle {
  private readonly clientFailures: TokenBuckets;
  private readonly addressFailures: TokenBuckets;
  private readonly addressAttempts: TokenBuckets;

  constructor(limits: TokenThrottleLimits, now: () => number = Date.now) {
    this.clientFailures = new TokenBuckets(
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
   * Throws 429 when this attempt may not even be checked. The address is checked first, and only a known client id
   * has a failure bucket (`peek` creates none), so a flood of made-up client ids from one address cannot grow the
   * maps past the address's own rate. `Retry-After` is the longest of the waits that would refuse this client and
   * address, so the right secret sent after it is checked (a shorter value would earn another 429).
   */
  admit(clientId: string, address: string): void {
    const byAddress = this.addressFailures.peek(address);
    const attempts = byAddress > 0 ? this.addressAttempts.peek(address) : this.addressAttempts.take(address);
    if (byAddress > 0 || attempts > 0) {
      const wait = Math.max(byAddress, attempts, this.clientFailures.peek(clientId));
      throw rejected(
        'token_address',
        `too many ${byAddress > 0 ? 'failed ' : ''}token requests from this address`,
        wait,
      );
    }
    const byClient = this.clientFailures.peek(clientId);
    if (byClient > 0) throw rejected('token_client', 'too many failed token requests for this client', byClient);
  }

  /**
   * The honest wait for an attempt refused for another reason (the secret checks are busy): the longest wait the
   * failure budgets would impose if the `pending` checks of this client id and address still running all failed.
   */
  retryAfter(clientId: string, address: string, pending: { client: number; address: number }): number {
    return Math.max(
      1,
      this.clientFailures.peek(clientId, pending.client),
      this.addressFailures.peek(address, pending.address),
    );
  }

  /** Entries held in memory across the throttle's maps (tests: bounded whatever the client ids). */
  entries(): number {
    return this.clientFailures.size + this.addressFailures.size + this.addressAttempts.size;
  }

  /** Records a wrong secret or an unknown client id. */
  failed(clientId: string, address: string): void {
    this.clientFailures.take(clientId);
    this.addressFailures.take(address);
  }
}

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
