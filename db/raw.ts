import { createHash } from 'node:crypto';
import type { Em } from './orm';

interface PgClient {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * One statement straight through the driver on a connection of the ORM's own pool: no knex query builder, no
 * MikroORM logging or result mapping around it. For the hot path's single-statement requests (a quote, a page of
 * a list), where those layers cost more CPU than the statement itself (decision 0034). The
 * statement runs in its own implicit transaction, so it is never for a caller inside one: that caller's work
 * must go through its EntityManager and connection.
 * Placeholders are pg's `$1, $2, ...`; rows come back with the same type parsing as `em.execute`.
 * `prepared` names the statement: each connection then parses it once and Postgres may reuse its plan, which for
 * a statement of several CTEs is most of what the server spends on it. The name must stand for one text only.
 */
export async function rawQuery<R>(
  em: Em,
  text: string,
  values: unknown[],
  opts: { prepared?: string } = {},
): Promise<R[]> {
  return poolOf(em).query<R>(text, values, opts);
}

/** The ORM's pool, for a statement that serves several scopes at once (db/statement-batch.ts): no scope of its own. */
export interface Pool {
  query<R>(text: string, values: unknown[], opts?: { prepared?: string }): Promise<R[]>;
}

interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<void>;
}

const pools = new WeakMap<KnexClient, Pool>();

/**
 * The pool under an EntityManager: every EntityManager of one ORM has the same one, the same object. Never for an
 * EntityManager inside a transaction: its statements belong on the transaction's connection.
 */
export function poolOf(em: Em): Pool {
  if (em.isInTransaction()) throw new Error('the pool runs statements outside a transaction only; use em.execute');
  const knexClient = em.getConnection().getKnex().client as KnexClient;
  let pool = pools.get(knexClient);
  if (!pool) {
    pool = poolOn(knexClient);
    pools.set(knexClient, pool);
  }
  return pool;
}

function poolOn(knexClient: KnexClient): Pool {
  return {
    async query<R>(text: string, values: unknown[], opts: { prepared?: string } = {}): Promise<R[]> {
      const connection = await knexClient.acquireConnection();
      try {
        return (await connection.query({ name: opts.prepared, text, values })).rows as R[];
      } catch (err) {
        await serverDoneWith(connection);
        throw err;
      } finally {
        // A connection that failed under the query is marked disposed by knex, and its pool drops it on next acquire.
        void knexClient.releaseConnection(connection);
      }
    },
  };
}

/**
 * Waits until Postgres has ended the statement that failed on `connection`. The driver rejects the query as soon as
 * the error arrives, and Postgres sends the error before it aborts the statement's transaction: until then that
 * transaction's advisory locks are still held. A caller that runs the failed statement's rows again at once on other
 * connections (db/statement-batch.ts) would find its own keys locked and answer "busy". A statement queued behind
 * the failed one runs only after the abort; a connection that broke answers nothing more, and nothing holds its locks.
 */
async function serverDoneWith(connection: PgClient): Promise<void> {
  await connection.query({ text: 'select 1', values: [] }).catch(() => undefined);
}

/**
 * A read written with knex-style `?` placeholders (every `?` in the text is one): inside a transaction through
 * the EntityManager, which owns that connection; outside one straight through the driver, numbered for pg.
 * `prepared` as in `rawQuery`, only for a text drawn from a small fixed set (a list without filters).
 */
export async function queryRows<R>(
  em: Em,
  text: string,
  values: unknown[],
  opts: { prepared?: string } = {},
): Promise<R[]> {
  if (em.isInTransaction()) return (await em.execute(text, values)) as R[];
  return rawQuery<R>(em, numbered(text), values, opts);
}

/** knex-style `?` placeholders (every `?` in the text is one) as pg's `$1, $2, ...`. */
export function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

// Callers name only texts from small fixed sets, so this stays small; the bound is a guard, not a cache policy.
const names = new Map<string, string>();
const MAX_NAMES = 1000;

/** A statement name for `prepared`, fixed by its text (each connection keeps one prepared statement per name). */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    if (names.size >= MAX_NAMES) names.clear();
    name = `cambio-${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}
