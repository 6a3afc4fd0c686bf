// The per-customer rate limit's shared counters (table `rate_limits`), kept by rate-limiter-flexible's Postgres
// store on a small pg Pool of its own with the application's session settings, its bounds shorter: one upsert per
// consume, written by the library (its SQL, not ours). Keys are `<customer id>` only: a customer's counter is its
// own row. The PSP notice route's limit (decision 0107) keeps its counters here too, keyed by client address under
// its own prefix.
import { RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';
import { SessionSettings, sidePool } from '../session-settings';

// Consumes are one short statement each; 2 connections keep up with a process's whole request rate (bench:api).
const POOL_SIZE = 2;
// A consume is one upsert of one row: it answers in milliseconds, or Postgres is not answering and the insurance
// limiter decides. So the counter's pool has bounds of its own, shorter than the application's (decision 0285):
// with the application's, a request past its share waited a whole statement bound (DB_STATEMENT_TIMEOUT_MS + 1 s,
// 31 s by default) on a stalled Postgres before it was admitted, a route that needs no Postgres included.
const COUNTER_STATEMENT_TIMEOUT_MS = 500;
const COUNTER_CONNECT_TIMEOUT_MS = 1_000;
const atMost = (configured: number, max: number) => (configured > 0 ? Math.min(configured, max) : max);

export interface RateLimitStore {
  /**
   * A fixed-window counter of `points` per `windowSeconds` per key, on this store's pool. `scope` names what the
   * keys are (`customer`, `rail-notice`): two limits never share a counter.
   */
  limiter(points: number, windowSeconds: number, scope?: string): RateLimiterPostgres;
  close(): Promise<void>;
}

/**
 * The shared counters' pool. While Postgres does not answer, each limiter's in-memory insurance limiter (the same
 * window, in this process) decides instead, so a database outage does not turn into a rate-limit outage.
 */
export function openRateLimitStore(databaseUrl: string, session: SessionSettings): RateLimitStore {
  const bounds = {
    ...session,
    statementTimeoutMs: atMost(session.statementTimeoutMs, COUNTER_STATEMENT_TIMEOUT_MS),
    connectTimeoutMs: atMost(session.connectTimeoutMs, COUNTER_CONNECT_TIMEOUT_MS),
  };
  const pool = sidePool(databaseUrl, POOL_SIZE, bounds, 'cambio-api rate-limits');
  return {
    limiter: (points, windowSeconds, scope = 'customer') =>
      new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        points,
        duration: windowSeconds,
        // The rule is part of the key: two rules never share a counter.
        keyPrefix: `${scope}:${points}/${windowSeconds}s`,
        insuranceLimiter: new RateLimiterMemory({ points, duration: windowSeconds }),
      }),
    close: () => pool.end(),
  };
}
