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

/** The end of the last window reconciled on `rail`, or null before the first run. */
export async function lastWindowEnd(em: Em, rail: string): Promise<Date | null> {
  const [row] = await em.execute(`select max(window_end) as window_end from rail_reconciliations where rail = ?`, [
    rail,
  ]);
  return row?.window_end ? new Date(row.window_end as string) : null;
}

export async function addReconciliationRun(em: Em, run: ReconciliationRun): Promise<void> {
  await em.execute(
    `insert into rail_reconciliations (id, rail, window_start, window_end, listed, late, created_at)
     values (?, ?, ?, ?, ?, ?, now())`,
    [randomUUID(), run.rail, run.windowStart, run.windowEnd, run.listed, run.late],
  );
}
