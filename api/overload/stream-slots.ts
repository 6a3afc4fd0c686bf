import { CambioError } from '../../domain/errors';

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
  wake: () => void;
}

/**
 * Slots for long streamed bodies (statements), process-wide and per customer (decision 0251). A paused stream (a
 * client that reads slowly or not at all) holds its pages in this process's heap until its socket drains: each
 * customer's in-flight bound (customer-limits.ts) kept one customer's within reach, but a few customers together
 * could still run the process out of memory, and every customer's requests with it. Past its own share a request
 * waits, then is 429 (its customer's doing); past the process's, it waits, then is 503 with Retry-After.
 * A freed slot goes to the waiter whose customer has the fewest running (the oldest of those), skipping any whose
 * customer is at its share.
 */
export class StreamSlots {
  private running = 0;
  private readonly byCustomer = new Map<string, number>();
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limits: StreamLimits) {}

  /** Resolves with the release of a slot; rejects with RATE_LIMITED or SERVICE_UNAVAILABLE after the wait. */
  async take(customerId: string): Promise<() => void> {
    // A waiter's slot is reserved by the release that wakes it, so no newcomer takes it in between.
    if (this.free(customerId)) this.reserve(customerId);
    else await this.wait(customerId);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      const mine = (this.byCustomer.get(customerId) ?? 1) - 1;
      if (mine > 0) this.byCustomer.set(customerId, mine);
      else this.byCustomer.delete(customerId);
      this.wakeNext();
    };
  }

  private get label(): string {
    return this.limits.label ?? 'statements';
  }

  /** Streams written now (tests and metrics). */
  get active(): number {
    return this.running;
  }

  private reserve(customerId: string): void {
    this.running += 1;
    this.byCustomer.set(customerId, (this.byCustomer.get(customerId) ?? 0) + 1);
  }

  private runningOf(customerId: string): number {
    return this.byCustomer.get(customerId) ?? 0;
  }

  private free(customerId: string): boolean {
    return this.running < this.limits.max && this.runningOf(customerId) < this.limits.perCustomer;
  }

  private wait(customerId: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        customerId,
        wake: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(this.refusal(customerId));
      }, this.limits.waitMs);
      this.waiting.push(waiter);
    });
  }

  private wakeNext(): void {
    // The waiter whose customer has the fewest streams running, the oldest of those: a customer that queued many
    // before another asked for one does not keep it waiting behind them all (decision 0357).
    let at = -1;
    for (let i = 0; i < this.waiting.length; i++) {
      const customerId = this.waiting[i].customerId;
      if (!this.free(customerId)) continue;
      if (at < 0 || this.runningOf(customerId) < this.runningOf(this.waiting[at].customerId)) at = i;
    }
    if (at < 0) return;
    const [next] = this.waiting.splice(at, 1);
    this.reserve(next.customerId);
    next.wake();
  }

  private refusal(customerId: string): CambioError {
    if (this.runningOf(customerId) >= this.limits.perCustomer) {
      return new CambioError(
        'RATE_LIMITED',
        `too many ${this.label} at once; at most ${this.limits.perCustomer} are written to one customer at a time`,
        { retryAfterSeconds: 1 },
      );
    }
    return new CambioError('SERVICE_UNAVAILABLE', `this API process is writing as many ${this.label} as it can hold`, {
      retryAfterSeconds: 2,
    });
  }
}
