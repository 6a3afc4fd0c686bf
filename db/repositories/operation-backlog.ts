// A customer's backlog: its operations accepted but not yet started by the engine (REQUESTED, deposits aside: a
// deposit's REQUESTED is a wait for the payer's money, not for the engine). How it reaches Postgres: hand-written
// statements through the EntityManager's connection (em.execute), and the admission gate's read, outside any
// transaction, straight through the driver (db/raw.ts); all read from operations_pending_index
// (Migration20261126100000FairShare), a partial index that holds only the backlog, however large the table grows.
// Tenant: `addCustomerBacklog` and `customerBacklogAndKey` take the customer from the EntityManager's scope
// (`tenantOf`); `backlogsByCustomer` is the metrics' read across customers (a system-scoped EntityManager).
import type { SqlBatch } from '../batch';
import { Em, tenantOf } from '../orm';
import { numbered, rawQuery, statementName } from '../raw';
import { advisoryLockId, answersFor } from './idempotency';

export interface Backlog {
  /** Pending operations, counted up to the bound it was asked about (never more than `upTo`). */
  count: number;
  /** How long the oldest pending operation has waited, in seconds (0 when none waits). */
  oldestAgeSeconds: number;
}

// Counting stops at the LIMIT: at the bound, a request reads `upTo` index entries, never the whole backlog.
const CUSTOMER_BACKLOG = `select count(*)::int as n, coalesce(extract(epoch from now() - min(created_at)), 0) as age
  from (select created_at from operations
        where customer_id = ? and status = 'REQUESTED' and type <> 'DEPOSIT'
        order by created_at limit ?) pending`;

// The same count; whether the request's key holds a stored answer (the one a retry must be given again); and
// whether a live request holds the key's lock (a concurrent duplicate). The lock is tried, not waited for: taken
// here, it is this statement's implicit transaction's and ends with it, hence `rawQuery`, which refuses to run in a
// transaction (there the lock would outlive the read and make the request's own transaction find its key busy).
const BACKLOG_AND_KEY = numbered(`select b.n, b.age, exists (
    select 1 from idempotency_keys k where k.customer_id = ? and k.key = ? and ${answersFor('k')}) as key_answered,
    not pg_try_advisory_xact_lock(?::bigint) as key_busy
  from (${CUSTOMER_BACKLOG}) b`);
const BACKLOG_AND_KEY_NAME = statementName(BACKLOG_AND_KEY);

/**
 * The customer's backlog, counted up to `upTo` rows, as a statement of the caller's batch (an operation's creation
 * reads it with its accounts and quote: one round trip). The function it returns reads it once the batch has run.
 */
export function addCustomerBacklog(batch: SqlBatch, em: Em, upTo: number): () => Backlog {
  const rows = batch.add<{ n: number; age: string | number }>(CUSTOMER_BACKLOG, [tenantOf(em), upTo]);
  return () => ({ count: Number(rows.rows[0].n), oldestAgeSeconds: Math.max(0, Number(rows.rows[0].age)) });
}

/**
 * The customer's backlog as `addCustomerBacklog` counts it, whether `key` holds a stored answer, and whether a live
 * request holds `key` (its lock is taken): one read outside any transaction, for the admission gate in front of a
 * request's keyed transaction.
 */
export async function customerBacklogAndKey(
  em: Em,
  upTo: number,
  key: string,
): Promise<Backlog & { keyAnswered: boolean; keyBusy: boolean }> {
  const customerId = tenantOf(em);
  const [row] = await rawQuery<{ n: number; age: string | number; key_answered: boolean; key_busy: boolean }>(
    em,
    BACKLOG_AND_KEY,
    [customerId, key, advisoryLockId(customerId, key), customerId, upTo],
    { prepared: BACKLOG_AND_KEY_NAME },
  );
  return {
    count: Number(row.n),
    oldestAgeSeconds: Math.max(0, Number(row.age)),
    keyAnswered: row.key_answered,
    keyBusy: row.key_busy,
  };
}

/** The customers with the largest backlogs, at most `limit` of them (the metrics' gauge). */
export async function backlogsByCustomer(em: Em, limit: number): Promise<Array<{ customerId: string; count: number }>> {
  const rows = await em.execute<Array<{ customer_id: string; n: number }>>(
    `select customer_id, count(*)::int as n from operations where status = 'REQUESTED' and type <> 'DEPOSIT'
     group by customer_id order by n desc limit ?`,
    [limit],
  );
  return rows.map((r) => ({ customerId: r.customer_id, count: Number(r.n) }));
}
