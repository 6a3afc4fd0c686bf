// A customer's backlog: its operations accepted but not yet started by the engine (REQUESTED, deposits aside: a
// deposit's REQUESTED is a wait for the payer's money, not for the engine). How it reaches Postgres: hand-written
// statements through the EntityManager's connection (em.execute), and the admission gate's read, outside any
// transaction, straight through the driver (db/raw.ts); all read from operations_pending_index
// (Migration20261126100000FairShare), a partial index that holds only the backlog, however large the table grows.
// Tenant: `customerBacklog` takes the customer from the EntityManager's scope (`tenantOf`); `backlogsByCustomer`
// is the metrics' read across customers (a system-scoped EntityManager).
import { Em, tenantOf } from '../orm';
import { queryRows, statementName } from '../raw';
import { answersFor } from './idempotency';

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

// The same count, and whether the request's key holds a stored answer (the one a retry must be given again).
const BACKLOG_AND_KEY = `select b.n, b.age, exists (
    select 1 from idempotency_keys k where k.customer_id = ? and k.key = ? and ${answersFor('k')}) as key_answered
  from (${CUSTOMER_BACKLOG}) b`;
const BACKLOG_AND_KEY_NAME = statementName(BACKLOG_AND_KEY);

/** The customer's backlog, counted up to `upTo` rows. */
export async function customerBacklog(em: Em, upTo: number): Promise<Backlog> {
  const [row] = await em.execute<Array<{ n: number; age: string | number }>>(CUSTOMER_BACKLOG, [tenantOf(em), upTo]);
  return { count: Number(row.n), oldestAgeSeconds: Math.max(0, Number(row.age)) };
}

/**
 * The customer's backlog as `customerBacklog` counts it, and whether `key` holds a stored answer: one read outside
 * any transaction, for the admission gate in front of a request's keyed transaction.
 */
export async function customerBacklogAndKey(
  em: Em,
  upTo: number,
  key: string,
): Promise<Backlog & { keyAnswered: boolean }> {
  const customerId = tenantOf(em);
  const [row] = await queryRows<{ n: number; age: string | number; key_answered: boolean }>(
    em,
    BACKLOG_AND_KEY,
    [customerId, key, customerId, upTo],
    { prepared: BACKLOG_AND_KEY_NAME },
  );
  return { count: Number(row.n), oldestAgeSeconds: Math.max(0, Number(row.age)), keyAnswered: row.key_answered };
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
