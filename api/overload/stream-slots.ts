import { CambioError } from '../../domain/errors';

/** How long a statement, list page or large body waits for a slot before it is refused: the in-flight queue's wait. */
export const SLOT_WAIT_MS = 10_000;

export interface StreamLimits {
  /** Streamed bodies this process writes at once, for every customer together. */
  max: number;
  /** Of those, one customer's at most. */
  perCustomer: number;
  /** How long a request waits for a slot before it is refused. */
  waitMs: number;
  /** What the refusals name ("statements" when unset). */
  label?: string;
}

interface Waiter {
  customerId: string;
  slots: number;
  wake: () => void;
}

/**
 * Slots for long streamed bodies (statements), process-wide and per customer (decision 0251); list pages take one per
 * row (0361), large request bodies one per KiB (0362). A paused stream (a client that reads slowly or not at all)
 * holds its pages in this process's heap until its socket drains: each customer's in-flight bound (customer-limits.ts)
 * kept one customer's within reach, but a few customers together could still run the process out of memory, and every
 * customer's requests with it. Past its own share a request waits, then is 429 (its customer's doing); past the
 * process's, it waits, then is 503 with Retry-After.
 * A freed slot goes to the waiter whose customer has the fewest running, then the one whose customer's turn came
 * longest ago, skipping any whose customer is at its share.
 */
export class StreamSlots {
  private running = 0;
  private readonly byCustomer = new Map<string, number>();
  private readonly waiting: Waiter[] = [];
  /** When each customer with a slot or a waiter was last given a slot, in grants counted (its turn in the round). */
  private readonly lastGrant = new Map<string, number>();
  private grants = 0;

  constructor(private readonly limits: StreamLimits) {}

  /**
   * Resolves with the release of `weight` slots (a list's page takes one per row it may hold; at most the customer's
   * share); rejects with RATE_LIMITED or SERVICE_UNAVAILABLE after the wait.
   */
  async take(customerId: string, weight = 1): Promise<() => void> {
    const slots = Math.max(1, Math.min(weight, this.limits.perCustomer, this.limits.max));
    // A waiter's slots are reserved by the release that wakes it, so no newcomer takes them in between; nor does one
    // pass a waiter the process has no room for (a page of 100 behind pages of 10 would wait for ever).
    const fits = this.running + slots <= this.limits.max && this.customerFits({ customerId, slots });
    if (fits && !this.waiting.some((w) => this.customerFits(w))) {
      this.reserve(customerId, slots);
    } else await this.wait(customerId, slots);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= slots;
      const mine = this.runningOf(customerId) - slots;
      if (mine > 0) this.byCustomer.set(customerId, mine);
      else this.byCustomer.delete(customerId);
      this.wakeNext();
      this.forgetIfIdle(customerId);
    };
  }

  private get label(): string {
    return this.limits.label ?? 'statements';
  }

  /** Slots taken now (tests and metrics). */
  get active(): number {
    return this.running;
  }

  private reserve(customerId: string, slots: number): void {
    this.running += slots;
    this.byCustomer.set(customerId, this.runningOf(customerId) + slots);
    this.lastGrant.set(customerId, ++this.grants);
  }

  /** A customer with nothing running and nothing waiting starts its next round afresh. */
  private forgetIfIdle(customerId: string): void {
    if (this.runningOf(customerId) > 0 || this.waiting.some((w) => w.customerId === customerId)) return;
    this.lastGrant.delete(customerId);
  }

  private runningOf(customerId: string): number {
    return this.byCustomer.get(customerId) ?? 0;
  }

  private customerFits(w: Pick<Waiter, 'customerId' | 'slots'>): boolean {
    return this.runningOf(w.customerId) + w.slots <= this.limits.perCustomer;
  }

  private wait(customerId: string, slots: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        customerId,
        slots,
        wake: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        this.forgetIfIdle(customerId);
        // The one that left may have been the waiter the others were queued behind.
        this.wakeNext();
        reject(this.refusal(customerId, slots));
      }, this.limits.waitMs);
      this.waiting.push(waiter);
    });
  }

  private wakeNext(): void {
    // The waiter whose customer has the fewest slots running; among those, the customer given one the longest ago
    // (one never given one first), its oldest request. A customer that queued many before another asked for one
    // does not keep it waiting behind them all (decision 0357), nor wins every slot it frees itself by being older
    // (decision 0361): the customers take their turns. Waiters whose customer is at its share are passed over; the
    // one chosen waits, and the rest behind it, until the process has room for it.
    for (;;) {
      let at = -1;
      for (let i = 0; i < this.waiting.length; i++) {
        if (!this.customerFits(this.waiting[i])) continue;
        if (at < 0 || this.before(this.waiting[i].customerId, this.waiting[at].customerId)) at = i;
      }
      if (at < 0 || this.running + this.waiting[at].slots > this.limits.max) return;
      const [next] = this.waiting.splice(at, 1);
      this.reserve(next.customerId, next.slots);
      next.wake();
    }
  }

  /** Whether `a`'s waiter goes before `b`'s: fewer running, else an older last grant; a tie keeps the older waiter. */
  private before(a: string, b: string): boolean {
    const running = this.runningOf(a) - this.runningOf(b);
    if (running !== 0) return running < 0;
    return (this.lastGrant.get(a) ?? 0) < (this.lastGrant.get(b) ?? 0);
  }

  private refusal(customerId: string, slots: number): CambioError {
    if (this.runningOf(customerId) + slots > this.limits.perCustomer) {
      return new CambioError(
        'RATE_LIMITED',
        `too many ${this.label} at once; one customer has at most ${this.limits.perCustomer} at a time`,
        { retryAfterSeconds: 1 },
      );
    }
    return new CambioError('SERVICE_UNAVAILABLE', `this API process has as many ${this.label} in hand as it can hold`, {
      retryAfterSeconds: 2,
    });
  }
}
