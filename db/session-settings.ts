// What every application connection to Postgres is told at connect time (request transactions, activities, the
// relay, the CLI), so that a stuck client cannot hold what others need for longer than a bound we chose
// (decision 0052).
import { Pool } from 'pg';
import type { Config } from '../config';

export interface SessionSettings {
  /** Postgres ends a session idle inside a transaction this long: a frozen process's locks go with it. */
  idleInTransactionTimeoutMs: number;
  /** A statement waiting on a row or advisory lock gives up after this (55P03). */
  lockTimeoutMs: number;
  /** A statement running longer is cancelled (57014). */
  statementTimeoutMs: number;
  /** Opening a connection gives up after this (Postgres down or unreachable). */
  connectTimeoutMs: number;
  /** Waiting for a free pooled connection gives up after this. */
  acquireTimeoutMs: number;
}

// TCP keepalives: a peer gone without a FIN (a partition, a host that died) is probed after 10 s idle, on both ends
// (the server has its own tcp_keepalives_* for the session side). Node 20 sets only the idle time: the probes' interval
// and count are the host's (net.ipv4.tcp_keepalive_intvl and _probes; Linux's defaults give up after 11 minutes).
const KEEPALIVE_IDLE_MS = 10_000;
// How long past statement_timeout the client gives up on an answer (decision 0228): the server's own cancel first.
const QUERY_TIMEOUT_MARGIN_MS = 1_000;

export const sessionSettingsOf = (config: Config): SessionSettings => ({
  idleInTransactionTimeoutMs: config.dbIdleInTransactionTimeoutMs,
  lockTimeoutMs: config.dbLockTimeoutMs,
  statementTimeoutMs: config.dbStatementTimeoutMs,
  connectTimeoutMs: config.dbConnectTimeoutMs,
  acquireTimeoutMs: config.dbPoolAcquireTimeoutMs,
});

/**
 * The node-postgres client options that carry the settings: the three timeouts travel as startup parameters (no
 * round trip of their own), the keepalive is set on the socket. 0 leaves a timeout off, as in Postgres.
 */
export function pgClientOptions(s: SessionSettings, applicationName?: string): Record<string, unknown> {
  return {
    ...(s.idleInTransactionTimeoutMs ? { idle_in_transaction_session_timeout: s.idleInTransactionTimeoutMs } : {}),
    ...(s.lockTimeoutMs ? { lock_timeout: s.lockTimeoutMs } : {}),
    ...(s.statementTimeoutMs ? { statement_timeout: s.statementTimeoutMs } : {}),
    // The client's own bound, a little past the server's: a Postgres that stops answering without closing the
    // connection (frozen, a stalled network path) cannot cancel anything, and the query would wait for ever.
    ...(s.statementTimeoutMs ? { query_timeout: s.statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS } : {}),
    ...(s.connectTimeoutMs ? { connectionTimeoutMillis: s.connectTimeoutMs } : {}),
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    ...(applicationName ? { application_name: applicationName } : {}),
  };
}

/**
 * A small node-postgres pool beside the ORM's, for a job whose bounds are its own (the shared rate counters, /readyz's
 * probe): connected on first use, with the settings `s`; an idle connection that breaks is replaced by the pool.
 */
export function sidePool(databaseUrl: string, max: number, s: SessionSettings, applicationName: string): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max, ...pgClientOptions(s, applicationName) });
  pool.on('error', () => undefined); // an idle connection that broke: the pool replaces it
  return pool;
}
