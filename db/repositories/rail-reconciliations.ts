// Reconciliation runs of the rails (table `rail_reconciliations`): one row per finished run, so the next run
// knows where the last one's window ended. Plain SQL through the caller's EntityManager; no tenant: a run covers
// every customer's payments on one rail.
import { randomUUID } from 'node:crypto';
import type { Em } from '../orm';

export interface ReconciliationRun {
  rail: string;
  windowStart: Date;
  windowEnd: Date;
  /** What the provider listed in the window. */
  listed: number;
  /** Of those, how many no notice had brought (recorded by this run). */
  late: number;
}

/** The windows reconciled on `rail` so far: where the first began and the last ended (both null before any run). */
export interface ReconciledSpan {
  firstStart: Date | null;
  lastEnd: Date | null;
}

export async function reconciledSpan(em: Em, rail: string): Promise<ReconciledSpan> {
  const [row] = await em.execute(
    `select min(window_start) as first_start, max(window_end) as last_end from rail_reconciliations where rail = ?`,
    [rail],
  );
  const at = (v: unknown) => (v ? new Date(v as string) : null);
  return { firstStart: at(row?.first_start), lastEnd: at(row?.last_end) };
}

/**
 * The deployment's origin on `rail` (table `rail_origins`): the first call records the database's clock, every
 * later one (any process, any restart) reads that same instant back.
 */
export async function railOrigin(em: Em, rail: string): Promise<Date> {
  // One round trip: insert, else read. A process that raced another's insert of the row waits for it and finds
  // nothing to read in its own statement's snapshot; its second statement sees the row.
  for (let attempt = 1; ; attempt++) {
    const [row] = await em.execute(
      `with added as (insert into rail_origins (rail) values (?) on conflict (rail) do nothing returning since)
       select since from added union all select since from rail_origins where rail = ? limit 1`,
      [rail, rail],
    );
    if (row?.since) return new Date(row.since as string);
    if (attempt >= 2) throw new Error(`the origin of rail ${rail} could not be recorded nor read`);
  }
}

export async function addReconciliationRun(em: Em, run: ReconciliationRun): Promise<void> {
  await em.execute(
    `insert into rail_reconciliations (id, rail, window_start, window_end, listed, late, created_at)
     values (?, ?, ?, ?, ?, ?, now())`,
    [randomUUID(), run.rail, run.windowStart, run.windowEnd, run.listed, run.late],
  );
}
