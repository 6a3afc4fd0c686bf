// Per-subscription permits for delivery attempts in one worker process (WEBHOOK_ENDPOINT_CONCURRENCY): at most
// `cap` POSTs to one subscription at once. A delivery over the cap is not parked here for long (that would hold
// its activity slot while a slow endpoint makes it wait): unless its turn is expected within SHORT_WAIT_MS, it
// is told how long to wait, and its workflow sleeps on a durable timer.

export interface Permit {
  /** Gives the permit back; the attempt's duration feeds the subscription's estimate. */
  release(): void;
  /** Gives the permit back unused (no attempt was made): the estimate is left as it was. */
  abandon(): void;
}

export type PermitAnswer = { permit: Permit } | { retryInMs: number };

interface Waiter {
  grant(permit: Permit): void;
  timer: NodeJS.Timeout;
}

interface Endpoint {
  /** Start times of the attempts in flight, by a number of the attempt's own. */
  inFlight: Map<number, number>;
  /** Smoothed duration of this endpoint's recent attempts, ms (undefined before the first one ended). */
  averageMs: number | undefined;
  /** The last turn handed to a delivery sent away (epoch ms): each busy answer books the next one after it. */
  lastTurnAt: number;
  /** Deliveries waiting in the process for a permit of a fast endpoint (at most SHORT_WAIT_MS each), in order. */
  waiters: Waiter[];
  /** When it last had nothing in flight and nothing booked (epoch ms), or undefined while busy. */
  idleSince: number | undefined;
}

// A delivery waits in the process only when the endpoint is fast enough that its turn comes within this: less
// than a timer round trip costs (two workflow tasks and an activity dispatch), and about what a healthy attempt
// holds its slot anyway. A slow or hanging endpoint never makes a delivery hold a slot to wait.
export const SHORT_WAIT_MS = 250;
// Until one of its attempts has ended, an endpoint's attempts are assumed to take this, and once the oldest in
// flight is older, as long as the attempt timeout (none outlasts it): an estimate taken from the oldest's age
// would stay too short while a slow endpoint's first attempts are in flight, and its backlog would ask again and
// again for nothing.
const UNKNOWN_DURATION_MS = 1000;
// An endpoint's estimate is kept this long after it went idle, so the next burst is paced on what it knows.
const FORGET_IDLE_MS = 10 * 60 * 1000;
// Weight of the newest attempt in the smoothed duration.
const SMOOTHING = 0.3;
// The longest wait a busy answer books, before its ±20%: a delivery behind a long backlog asks again about this
// often.
export const MAX_WAIT_MS = 5 * 60 * 1000;
const MIN_WAIT_MS = 50;

/**
 * The permits of one process. A busy answer books a turn: the waits spread the subscription's backlog over the
 * rate at which it completes attempts (cap / attempt duration), so waiting deliveries come back about when a
 * permit is free instead of polling, whatever the backlog. The booking is a hint, not a reservation: whoever
 * asks when a permit is free gets it. State is per subscription and dropped once idle.
 */
export class EndpointPermits {
  private readonly endpoints = new Map<string, Endpoint>();
  private lastId = 0;
  private lastSweep = 0;

  constructor(
    private readonly cap: number,
    private readonly attemptTimeoutMs: number,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** A permit now, or after a short wait in the process for a fast endpoint; otherwise how long to wait. */
  async acquire(subscriptionId: string): Promise<PermitAnswer> {
    const answer = this.tryAcquire(subscriptionId, true);
    if (!('wait' in answer)) return answer;
    const ep = answer.wait;
    return new Promise<PermitAnswer>((resolve) => {
      const waiter: Waiter = {
        grant: (permit) => {
          clearTimeout(waiter.timer);
          resolve({ permit });
        },
        timer: setTimeout(() => {
          ep.waiters.splice(ep.waiters.indexOf(waiter), 1);
          resolve({ retryInMs: this.book(ep, this.now()) });
        }, SHORT_WAIT_MS),
      };
      ep.waiters.push(waiter);
    });
  }

  /** A permit or a booked wait, never waiting in the process (`short`: or the endpoint to wait on briefly). */
  tryAcquire(subscriptionId: string): PermitAnswer;
  tryAcquire(subscriptionId: string, short: true): PermitAnswer | { wait: Endpoint };
  tryAcquire(subscriptionId: string, short = false): PermitAnswer | { wait: Endpoint } {
    const t = this.now();
    this.sweep(t);
    let ep = this.endpoints.get(subscriptionId);
    if (!ep) {
      ep = { inFlight: new Map(), averageMs: undefined, lastTurnAt: 0, waiters: [], idleSince: undefined };
      this.endpoints.set(subscriptionId, ep);
    }
    ep.idleSince = undefined;
    if (ep.inFlight.size < this.cap && ep.waiters.length === 0) return { permit: this.grant(ep, t) };
    if (short && ((ep.waiters.length + 1) * this.perAttempt(ep, t)) / this.cap <= SHORT_WAIT_MS) return { wait: ep };
    return { retryInMs: this.book(ep, t) };
  }

  /** Subscriptions with state (for tests: ones idle for FORGET_IDLE_MS are dropped). */
  get size(): number {
    return this.endpoints.size;
  }

  /** How long an attempt of this endpoint takes: what the last ones took, or the oldest in flight if longer. */
  private perAttempt(ep: Endpoint, t: number): number {
    const oldest = t - Math.min(...ep.inFlight.values());
    if (ep.averageMs !== undefined) return Math.max(ep.averageMs, oldest);
    return oldest < UNKNOWN_DURATION_MS ? UNKNOWN_DURATION_MS : Math.max(this.attemptTimeoutMs, oldest);
  }

  /** Drops endpoints idle for FORGET_IDLE_MS, at most once a minute: memory stays bounded by the active ones. */
  private sweep(t: number): void {
    if (t - this.lastSweep < 60_000) return;
    this.lastSweep = t;
    for (const [id, ep] of this.endpoints) {
      if (ep.idleSince !== undefined && t - ep.idleSince > FORGET_IDLE_MS) this.endpoints.delete(id);
    }
  }

  private book(ep: Endpoint, t: number): number {
    ep.lastTurnAt = Math.max(ep.lastTurnAt, t) + this.perAttempt(ep, t) / this.cap;
    // ±20% so deliveries booked together do not all come back in the same instant: on the capped wait, or a backlog
    // longer than the cap would ask again all at once, MAX_WAIT_MS after each burst that joined it.
    const wait = Math.min(MAX_WAIT_MS, ep.lastTurnAt - t) * (0.8 + 0.4 * this.random());
    return Math.round(Math.max(MIN_WAIT_MS, wait));
  }

  private grant(ep: Endpoint, startedAt: number): Permit {
    // Attempts may start in the same millisecond: each is keyed by a number of its own.
    const key = ++this.lastId;
    ep.inFlight.set(key, startedAt);
    let released = false;
    const giveBack = (attempted: boolean) => {
      if (released) return;
      released = true;
      ep.inFlight.delete(key);
      const t = this.now();
      if (attempted) {
        const took = t - startedAt;
        ep.averageMs = ep.averageMs === undefined ? took : ep.averageMs + SMOOTHING * (took - ep.averageMs);
      }
      // The permit goes to the first delivery waiting in the process, if any.
      const next = ep.waiters.shift();
      if (next) next.grant(this.grant(ep, t));
      else if (ep.inFlight.size === 0) ep.idleSince = Math.max(t, ep.lastTurnAt);
    };
    return { release: () => giveBack(true), abandon: () => giveBack(false) };
  }
}
