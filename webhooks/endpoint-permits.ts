// Per-subscription permits for delivery attempts in one worker process (WEBHOOK_ENDPOINT_CONCURRENCY): at most
// `cap` POSTs to one subscription at once. A delivery over the cap is not queued here (that would hold its
// activity slot while it waits): it is told how long to wait, and its workflow sleeps on a durable timer.

export interface Permit {
  /** Gives the permit back; the attempt's duration feeds the subscription's estimate. */
  release(): void;
}

export type PermitAnswer = { permit: Permit } | { retryInMs: number };

interface Endpoint {
  /** Start times of the attempts in flight. */
  inFlight: Set<number>;
  /** Smoothed duration of this endpoint's recent attempts, ms (undefined before the first one ended). */
  averageMs: number | undefined;
  /** The last turn handed to a waiting delivery (epoch ms): each busy answer books the next one after it. */
  lastTurnAt: number;
}

// Weight of the newest attempt in the smoothed duration.
const SMOOTHING = 0.3;
// The longest a busy answer asks for: a delivery behind a long backlog asks again at least this often.
export const MAX_WAIT_MS = 5 * 60 * 1000;
const MIN_WAIT_MS = 50;

/**
 * The permits of one process. A busy answer books a turn: the waits spread the subscription's backlog over the
 * rate at which it completes attempts (cap / average duration), so waiting deliveries come back about when a
 * permit is free instead of polling, whatever the backlog. The booking is a hint, not a reservation: whoever
 * asks when a permit is free gets it. State is per subscription and dropped once idle.
 */
export class EndpointPermits {
  private readonly endpoints = new Map<string, Endpoint>();

  /**
   * `attemptTimeoutMs` (WEBHOOK_TIMEOUT_SECONDS) is the guess for how long an attempt takes until one has ended:
   * no attempt outlasts it, and guessing short for an endpoint that hangs has its backlog ask again and again.
   */
  constructor(
    private readonly cap: number,
    private readonly attemptTimeoutMs: number,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  tryAcquire(subscriptionId: string): PermitAnswer {
    const t = this.now();
    let ep = this.endpoints.get(subscriptionId);
    if (!ep) {
      ep = { inFlight: new Set(), averageMs: undefined, lastTurnAt: 0 };
      this.endpoints.set(subscriptionId, ep);
    }
    if (ep.inFlight.size < this.cap) return { permit: this.grant(subscriptionId, ep, t) };
    const oldest = Math.min(...ep.inFlight);
    const perAttempt = Math.max(ep.averageMs ?? this.attemptTimeoutMs, t - oldest);
    ep.lastTurnAt = Math.max(ep.lastTurnAt, t) + perAttempt / this.cap;
    // ±20% so deliveries booked together do not all come back in the same instant.
    const wait = (ep.lastTurnAt - t) * (0.8 + 0.4 * this.random());
    return { retryInMs: Math.round(Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, wait))) };
  }

  /** Subscriptions with state (for tests: idle ones are dropped). */
  get size(): number {
    return this.endpoints.size;
  }

  private grant(subscriptionId: string, ep: Endpoint, startedAt: number): Permit {
    // Two attempts may start in the same millisecond: a unique key per attempt.
    let key = startedAt;
    while (ep.inFlight.has(key)) key += 1e-6;
    ep.inFlight.add(key);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        ep.inFlight.delete(key);
        const took = this.now() - startedAt;
        ep.averageMs = ep.averageMs === undefined ? took : ep.averageMs + SMOOTHING * (took - ep.averageMs);
        if (ep.inFlight.size === 0 && ep.lastTurnAt <= this.now()) this.endpoints.delete(subscriptionId);
      },
    };
  }
}
