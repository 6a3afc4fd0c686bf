// A pooled connection whose query got no answer within query_timeout (db/session-settings.ts) is closed (decision
// 0228). node-postgres answers the caller but keeps the query active on the connection, so every later statement on
// it, the transaction's ROLLBACK first, would wait its own query_timeout behind it. Closed, the connection fails what
// waits on it at once and the pool opens a fresh one.
import type { Client } from 'pg';

const QUERY_READ_TIMEOUT = 'Query read timeout';

type Callback = (err: Error | null, result?: unknown) => void;

/**
 * The pool's afterCreate hook: wraps the client's queries, in knex's callback form and db/raw.ts's promise form, to
 * close the connection on a read timeout.
 */
export function closeOnQueryTimeout(conn: Client, done: (err: Error | null, conn: Client) => void): void {
  const query = conn.query.bind(conn) as (...args: unknown[]) => unknown;
  const closeOn = (err: unknown) => {
    if ((err as Error | null)?.message === QUERY_READ_TIMEOUT) streamOf(conn)?.destroy();
  };
  (conn as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      const callback = last as Callback;
      args[args.length - 1] = (err: Error | null, result?: unknown) => {
        closeOn(err);
        callback(err, result);
      };
    }
    const result = query(...args);
    // The caller's promise is returned as it is; this branch only watches it.
    if (result instanceof Promise) result.catch(closeOn);
    return result;
  };
  done(null, conn);
}

const streamOf = (conn: Client) =>
  (conn as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream;
