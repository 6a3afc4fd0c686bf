// The booking horizon: whether every posting booked before an instant has committed (decisions 0112, 0187). A
// posting's `booked_at` is the database's clock at its balance UPDATE (ledger.ts), not at its COMMIT, so a
// transaction that booked just before an instant may still be open after it. Postgres numbers transactions in the
// order they first write, and every posting writes (its ledger_transactions insert) before it reads the clock for
// booked_at. So, once the database's clock is past the instant, a transaction id taken after that (a marker) is above
// every transaction that booked before the instant, and once no transaction at or below the marker is running, they
// have all committed or rolled back. How it reaches Postgres: hand-written statements through em.execute, outside any
// transaction (each its own). Tenant: none; it reads no rows, only the server's clock and its snapshot
// (pg_current_snapshot needs no privilege, where pg_stat_activity hides the sessions of other roles).
import type { Em } from '../orm';

/** The database's clock, as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (every microsecond; these texts sort as their instants). */
export async function databaseClock(em: Em): Promise<string> {
  const [row] = (await em.execute(
    `select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as now`,
  )) as Array<{ now: string }>;
  return row.now;
}

/**
 * A transaction id above every one that has written so far: the id of a transaction of its own, which commits at
 * once (the statement runs outside a transaction). It costs one transaction id (a snapshot's xmax is no such marker:
 * it is one past the last transaction that ended, and one still running can be above it), once per process and
 * instant not yet settled (services/booked-before.ts).
 */
export async function bookingMarker(em: Em): Promise<string> {
  if (em.isInTransaction()) throw new Error('the booking marker is a transaction of its own');
  const [row] = (await em.execute('select pg_current_xact_id()::text as xid')) as Array<{ xid: string }>;
  return row.xid;
}

/**
 * Whether every transaction at or below `marker` has ended: the oldest transaction still running (the snapshot's
 * xmin, across the whole cluster) is above it. A transaction of another database on the same server counts too:
 * it delays the answer, never changes it.
 */
export async function endedUpTo(em: Em, marker: string): Promise<boolean> {
  const [row] = (await em.execute('select pg_snapshot_xmin(pg_current_snapshot()) > ?::xid8 as ended', [
    marker,
  ])) as Array<{ ended: boolean }>;
  return row.ended;
}
