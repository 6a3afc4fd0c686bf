import { timingSafeEqual } from 'node:crypto';
import { authorizationHeaders } from '../middleware/authorization-headers';
import type Koa from 'koa';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Orm } from '../../db/orm';
import {
  readDeploymentGauges,
  readStuckPayouts,
  type StuckFigure,
  type StuckKind,
} from '../../db/repositories/readiness-and-metrics';
import { CambioError } from '../../domain/errors';
import { RAILS } from '../../rails/funding';
import { registry } from '../../services/metrics';

/**
 * The API's Prometheus metrics (served at `/metrics`), on the process's registry (services/metrics.ts, which also
 * holds the counters the use cases tick). One registry per process; the counters are this process's,
 * the gauges read from Postgres are the whole deployment's (every API process reports the same value: aggregate
 * them with `max`, not `sum`). No label carries an id or a raw path, so cardinality stays fixed; one gauge names
 * customers (`cambio_customer_operation_backlog`), only the 100 with the largest backlogs, and none without one.
 */

// Buckets from a cached read (~2 ms) to the 30 s request timeout.
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const httpDuration = new Histogram({
  name: 'cambio_http_request_duration_seconds',
  help: 'HTTP request latency by method, route pattern and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

const idempotentReplays = new Counter({
  name: 'cambio_idempotency_replays_total',
  help: 'Responses replayed from a stored idempotency key',
  registers: [registry],
});

const listPages = new Counter({
  name: 'cambio_list_pages_total',
  help: 'Unfiltered list pages served, by source: a kept copy whose list version was unchanged, or a read of the page',
  labelNames: ['source'] as const,
  registers: [registry],
});

const operations = new Gauge({
  name: 'cambio_operations',
  help: 'Operations by type and status (whole database, refreshed at most every 30 s)',
  labelNames: ['type', 'status'] as const,
  registers: [registry],
});

const outboxBacklog = new Gauge({
  name: 'cambio_outbox_backlog',
  help: 'Workflow starts waiting in the outbox (workflow_starts rows)',
  registers: [registry],
});

const outboxOldest = new Gauge({
  name: 'cambio_outbox_oldest_age_seconds',
  help: 'Age of the oldest workflow start waiting in the outbox (0 when empty)',
  registers: [registry],
});

const customerBacklog = new Gauge({
  name: 'cambio_customer_operation_backlog',
  help:
    'Operations accepted but not yet started, per customer (the 100 largest backlogs; past ' +
    'MAX_PENDING_OPERATIONS_PER_CUSTOMER new ones get 429)',
  labelNames: ['customer'] as const,
  registers: [registry],
});

const scrapeErrors = new Counter({
  name: 'cambio_metrics_database_errors_total',
  help:
    'Scrapes whose database figures could not be read (the cached gauges serve their previous values, the stuck ' +
    'payout and return gauges are left out)',
  registers: [registry],
});

export const countIdempotentReplay = (): void => idempotentReplays.inc();
export const countListPage = (source: 'copy' | 'read'): void => listPages.inc({ source });

// A GROUP BY over every operation is a full scan: at most one per 30 s per process, and never longer than 2 s.
const OPERATIONS_REFRESH_MS = 30_000;
const DATABASE_QUERY_TIMEOUT_MS = 2000;

/**
 * Times every request, labelled with the route pattern (`/api/accounts/:accountId`), never the raw path. It runs
 * outside the error renderer so it sees the final status.
 */
export const httpMetrics: Koa.Middleware = async (ctx, next) => {
  const stop = httpDuration.startTimer();
  try {
    await next();
  } finally {
    const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
    stop({ method: ctx.method, route: typeof route === 'string' ? route : 'unmatched', status: String(ctx.status) });
  }
};

/** Who may read /metrics: the bearer of METRICS_TOKEN or, without one, a loopback client not behind a proxy. */
function mayScrape(ctx: Koa.Context, token: string | undefined): boolean {
  if (token) {
    // Two Authorization headers are refused, as on the API (decision 0346): Node keeps only the first.
    if (authorizationHeaders(ctx.req.rawHeaders) > 1) return false;
    const given = Buffer.from(ctx.get('Authorization'));
    const wanted = Buffer.from(`Bearer ${token}`);
    return given.length === wanted.length && timingSafeEqual(given, wanted);
  }
  // A request relayed by a proxy on this host comes from loopback too; the proxy's X-Forwarded-For gives it away.
  const address = ctx.socket.remoteAddress ?? '';
  return LOOPBACK.has(address) && !ctx.get('X-Forwarded-For');
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
// The outbox figures are cheap (an index scan of a table that is nearly always empty) but one scrape per second per
// Prometheus replica is plenty: scrapes closer together share the last figures.
const OUTBOX_REFRESH_MS = 1000;

// A scrape that waits longer than this for the stuck figures (the statement's own timeout, or no free connection)
// leaves them out rather than hold the scrape.
const STUCK_READ_DEADLINE_MS = DATABASE_QUERY_TIMEOUT_MS + 500;

/** `p`, or a rejection once `ms` have passed (the work itself goes on, and its outcome is dropped). */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * The stuck payout and return gauges (decision 0120), in a registry of the handler's own: they are read when
 * scraped, by their `collect()`, with the handler's database and threshold. Every rail has a series (0 when
 * nothing waits on it), so a series that is missing means the database did not answer, never that nothing is
 * stuck: a failed read leaves the four gauges without samples instead of failing /metrics or serving old figures.
 */
function stuckPayoutGauges(orm: Orm, afterSeconds: number): Registry {
  const own = new Registry();
  // The four gauges' collect() run together on each scrape and share one read (and concurrent scrapes too).
  let reading: Promise<StuckFigure[] | undefined> | undefined;
  const read = () =>
    (reading ??= within(readStuckPayouts(orm, afterSeconds, DATABASE_QUERY_TIMEOUT_MS), STUCK_READ_DEADLINE_MS)
      .catch(() => {
        scrapeErrors.inc();
        return undefined;
      })
      .finally(() => {
        reading = undefined;
      }));
  const fill = async (gauge: Gauge<'rail'>, kind: StuckKind, figure: 'count' | 'oldestAgeSeconds') => {
    const figures = await read();
    gauge.reset();
    if (!figures) return;
    const byRail = new Map<string, number>(RAILS.map((rail) => [rail, 0]));
    for (const f of figures) {
      if (f.kind !== kind) continue;
      // A rail outside the list (or none recorded) still counts, under a label of its own: never a row's value.
      const rail = f.rail !== null && byRail.has(f.rail) ? f.rail : 'other';
      const before = byRail.get(rail) ?? 0;
      byRail.set(rail, figure === 'count' ? before + f.count : Math.max(before, f.oldestAgeSeconds));
    }
    for (const [rail, value] of byRail) gauge.set({ rail }, value);
  };
  const gauge = (name: string, help: string, kind: StuckKind, figure: 'count' | 'oldestAgeSeconds') =>
    new Gauge({
      name,
      help,
      labelNames: ['rail'] as const,
      registers: [own],
      async collect() {
        await fill(this, kind, figure);
      },
    });
  const after = `unchanged for more than ${afterSeconds} s (STUCK_PAYOUT_AFTER_SECONDS)`;
  gauge('cambio_payouts_stuck', `Withdrawals PROCESSING at their rail's provider, ${after}`, 'payout', 'count');
  gauge(
    'cambio_payouts_stuck_oldest_age_seconds',
    'Seconds since the oldest stuck withdrawal last changed (0 when none)',
    'payout',
    'oldestAgeSeconds',
  );
  gauge('cambio_returns_stuck', `Payments RETURNING at their rail's provider, ${after}`, 'return', 'count');
  gauge(
    'cambio_returns_stuck_oldest_age_seconds',
    'Seconds since the oldest stuck return last changed (0 when none)',
    'return',
    'oldestAgeSeconds',
  );
  return own;
}

/**
 * `GET /metrics`: refreshes the database gauges (cached, and one refresh at a time however many scrapes arrive
 * together), then renders the registry in the text format, followed by the stuck payout gauges read as they are
 * rendered (`stuckPayoutAfterSeconds`: STUCK_PAYOUT_AFTER_SECONDS). Needs METRICS_TOKEN as a bearer token when it
 * is set, else answers loopback clients only (decision 0054).
 */
export function metricsHandler(orm: Orm, opts: { token?: string; stuckPayoutAfterSeconds: number }): Koa.Middleware {
  const stuck = stuckPayoutGauges(orm, opts.stuckPayoutAfterSeconds);
  let operationsAt = 0;
  let outboxAt = 0;
  let refreshing: Promise<void> | undefined;
  const refresh = async () => {
    if (Date.now() - outboxAt < OUTBOX_REFRESH_MS && Date.now() - operationsAt < OPERATIONS_REFRESH_MS) return;
    try {
      const withOperations = Date.now() - operationsAt >= OPERATIONS_REFRESH_MS;
      const gauges = await readDeploymentGauges(orm, DATABASE_QUERY_TIMEOUT_MS, withOperations);
      outboxBacklog.set(gauges.outbox.count);
      outboxOldest.set(Math.max(0, gauges.outbox.oldestAgeSeconds ?? 0));
      customerBacklog.reset();
      for (const b of gauges.backlogs) customerBacklog.set({ customer: b.customerId }, b.count);
      outboxAt = Date.now();
      if (gauges.operations) {
        operations.reset();
        for (const row of gauges.operations) operations.set({ type: row.type, status: row.status }, row.count);
        operationsAt = Date.now();
      }
    } catch {
      scrapeErrors.inc();
    }
  };
  return async (ctx) => {
    if (!mayScrape(ctx, opts.token)) {
      throw new CambioError(
        'UNAUTHORIZED',
        opts.token
          ? 'GET /metrics needs the METRICS_TOKEN bearer token'
          : 'GET /metrics answers loopback clients only unless METRICS_TOKEN is set',
      );
    }
    refreshing ??= refresh().finally(() => {
      refreshing = undefined;
    });
    await refreshing;
    ctx.set('Content-Type', registry.contentType);
    const [shared, own] = await Promise.all([registry.metrics(), stuck.metrics()]);
    ctx.body = `${shared}\n${own}`;
  };
}
