import { Stream } from 'node:stream';
import type Koa from 'koa';
import { CambioError } from '../../domain/errors';
import { countRejection } from '../../services/metrics';
import { whenResponseEnds } from './response-end';
import { TokenBuckets } from './token-bucket';

export interface CustomerLimits {
  /** Sustained requests per second per customer (token bucket refill). */
  perSecond: number;
  /** Requests a customer may send at once after being idle (token bucket size). */
  burst: number;
  /** Requests of one customer this process works on at the same time. */
  inFlight: number;
  /** Requests of one customer that may wait for a free slot; past it, 429 at once. */
  queue: number;
}

// A request that waited this long for one of its customer's slots is answered 429 instead: the client's own
// earlier requests are that slow, so more of them would only grow the queue.
const QUEUE_WAIT_MS = 10_000;

interface Lane {
  running: number;
  waiting: Array<() => void>;
}

/**
 * Per-customer admission in this API process: a token bucket bounds the rate, a counting semaphore bounds how
 * many of the customer's requests run at once (a small FIFO queue absorbs a burst). One customer flooding the
 * API therefore holds at most `inFlight` database connections and event-loop turns; everyone else's requests
 * keep their share. The in-flight bound is this process's (decision 0015); the rate is the deployment's when
 * `rate` is given (decision 0056), else this process's alone.
 */
export class CustomerAdmission {
  private readonly rate: (customerId: string) => number | Promise<number>;
  private readonly lanes = new Map<string, Lane>();

  /**
   * `rate`: the deployment-wide rate (api/overload/deployment-rate.ts); without it, a token bucket in this process.
   */
  constructor(
    private readonly limits: CustomerLimits,
    now: () => number = Date.now,
    rate?: (customerId: string) => Promise<number>,
  ) {
    const buckets = new TokenBuckets({ perSecond: limits.perSecond, burst: limits.burst }, now);
    this.rate = rate ?? ((customerId) => buckets.take(customerId));
  }

  /** Resolves with a release function once the request may run; throws RATE_LIMITED otherwise. */
  async admit(customerId: string): Promise<() => void> {
    const wait = await this.rate(customerId);
    if (wait > 0) throw rateLimited('rate', `too many requests; at most ${this.limits.perSecond} per second`, wait);
    const lane = this.lanes.get(customerId) ?? { running: 0, waiting: [] };
    this.lanes.set(customerId, lane);
    if (lane.running < this.limits.inFlight) {
      lane.running += 1;
      return this.releaser(customerId, lane);
    }
    if (lane.waiting.length >= this.limits.queue) {
      throw rateLimited('in_flight', `too many requests at once; at most ${this.limits.inFlight} run concurrently`, 1);
    }
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = lane.waiting.indexOf(wake);
        if (at >= 0) lane.waiting.splice(at, 1);
        reject(
          rateLimited('in_flight', `too many requests at once; at most ${this.limits.inFlight} run concurrently`, 1),
        );
      }, QUEUE_WAIT_MS);
      lane.waiting.push(wake);
    });
    // The slot was handed over by the request that released it (running was not decremented).
    return this.releaser(customerId, lane);
  }

  /** Requests of this customer running now (tests and metrics). */
  running(customerId: string): number {
    return this.lanes.get(customerId)?.running ?? 0;
  }

  private releaser(customerId: string, lane: Lane): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = lane.waiting.shift();
      if (next) next();
      else {
        lane.running -= 1;
        this.forgetIfIdle(customerId, lane);
      }
    };
  }

  private forgetIfIdle(customerId: string, lane: Lane): void {
    if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(customerId);
  }
}

function rateLimited(kind: 'rate' | 'in_flight', message: string, retryAfterSeconds: number): CambioError {
  countRejection(kind);
  return new CambioError('RATE_LIMITED', message, { retryAfterSeconds });
}

/** Paths of public routes (no bearer token): `POST /api/oauth/client/token`. */
export type IsPublic = (ctx: Koa.Context) => boolean;

/**
 * Runs before the body is read: authenticates every `/api` request that is not a public route (the bearer
 * check needs no body), then admits it under its customer's limits. A request without a valid token is
 * answered 401 without a byte of its body read, and a flooding customer's bodies wait in the kernel, not in
 * our memory. The route's own `authenticate` call finds the work done (see `authenticateOnce`).
 */
export function customerGate(
  authenticate: (ctx: Koa.Context) => unknown,
  isPublic: IsPublic,
  admission: CustomerAdmission,
): Koa.Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/api/') || isPublic(ctx)) return next();
    await authenticate(ctx);
    const release = await admission.admit(ctx.state.customerId);
    let streamed = false;
    try {
      await next();
      streamed = ctx.body instanceof Stream;
    } finally {
      // A streamed body (a statement) is written after every middleware has returned: its slot stays taken until
      // the response ends or its connection closes, or one customer's unread statements would each hold pages of
      // text in this process, unbounded by its in-flight limit, until the process ran out of memory (decision 0246).
      if (streamed) whenResponseEnds(ctx, release);
      else release();
    }
  };
}

/**
 * Makes an authenticate function run once per request: the gate calls it before the body is read and the
 * route calls it again; the second call returns the first call's result (a value, or the same promise).
 */
export function authenticateOnce<R>(authenticate: (ctx: Koa.Context) => R): (ctx: Koa.Context) => R {
  const done = new WeakMap<Koa.Context, { result: R }>();
  return (ctx) => {
    const previous = done.get(ctx);
    if (previous) return previous.result;
    const result = authenticate(ctx);
    done.set(ctx, { result });
    return result;
  };
}
