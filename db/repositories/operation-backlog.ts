// A customer's backlog: its operations accepted but not yet started by the engine (REQUESTED, deposits aside: a
// deposit's REQUESTED is a wait for the payer's money, not for the engine). How it reaches Postgres: hand-written
// statements through the EntityManager's connection (em.execute), both read from operations_pending_index
// (Migration20261126100000FairShare), a partial index that holds only the backlog, however large the table grows.
// Tenant: `customerBacklog` takes the customer from the EntityManager's scope (`tenantOf`); `backlogsByCustomer`
// is the metrics' read across customers (a system-scoped EntityManager).
import { Em, tenantOf } from '../orm';

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

/** The customer's backlog, counted up to `upTo` rows. */
export async function customerBacklog(em: Em, upTo: number): Promise<Backlog> {
  const [row] = await em.execute<Array<{ n: number; age: string | number }>>(CUSTOMER_BACKLOG, [tenantOf(em), upTo]);
  return { count: Number(row.n), oldestAgeSeconds: Math.max(0, Number(row.age)) };
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
