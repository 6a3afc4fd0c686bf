// Reconciliation of a rail (docs/decisions/0080: a Temporal Schedule every PIX_RECONCILE_EVERY_SECONDS): list
// what the provider received over the window since the last run, less an overlap, and record what no notice
// brought. A notice that was lost, or is still being retried by the PSP, is credited by the next run; one that
// arrives after the run finds its record and changes nothing.
import { systemEm } from '../db/orm';
import { addReconciliationRun, lastWindowEnd } from '../db/repositories/rail-reconciliations';
import type { Rail } from '../rails/rail';
import type { SettleContext } from './record-and-decide';
import { recordReceived } from './rail-payments';

// Each window starts this long before the last one ended: a Pix the PSP timestamps a little before it lists it
// (its clock, its own settlement lag) is still in the next window. Listing a payment twice costs one lookup.
export const RECONCILE_OVERLAP_MS = 10 * 60 * 1000;
// The first run of a deployment looks back this far: a PSP connected today may hold yesterday's payments.
export const FIRST_RUN_LOOKBACK_MS = 24 * 3600 * 1000;

export interface ReconcileResult {
  rail: string;
  windowStart: string;
  windowEnd: string;
  /** What the provider listed in the window, all pages. */
  listed: number;
  /** Of those, recorded by this run: no notice had brought them. */
  late: number;
  /** Recorded already (by a notice or an earlier run). */
  known: number;
  /** References whose recording failed (logged); the next run lists them again. */
  failed: string[];
}

/**
 * One run over `rail`. The provider call runs outside any transaction; each payment is then recorded and decided
 * on its own (a failure is reported and the run goes on); the run's row, written last, moves the next window on,
 * so a run that died on the way is done again by the next one over the same window.
 */
export async function reconcileRail(
  s: SettleContext,
  rail: Pick<Rail, 'rail' | 'listReceived'>,
  opts: { now?: Date; onFailure?: (endToEndId: string, err: unknown) => void; onProgress?: () => void } = {},
): Promise<ReconcileResult> {
  const to = opts.now ?? new Date();
  const last = await lastWindowEnd(systemEm(s.orm), rail.rail);
  const from = new Date(
    (last ? last.getTime() : to.getTime() - FIRST_RUN_LOOKBACK_MS) - (last ? RECONCILE_OVERLAP_MS : 0),
  );
  const received = await rail.listReceived({ from, to });
  const result: ReconcileResult = {
    rail: rail.rail,
    windowStart: from.toISOString(),
    windowEnd: to.toISOString(),
    listed: received.length,
    late: 0,
    known: 0,
    failed: [],
  };
  for (const p of received) {
    try {
      const { created } = await recordReceived(s, rail.rail, p);
      result[created ? 'late' : 'known']++;
    } catch (err) {
      result.failed.push(p.endToEndId);
      opts.onFailure?.(p.endToEndId, err);
    }
    opts.onProgress?.();
  }
  // A failed payment keeps the window where it was: the next run lists it again.
  if (result.failed.length === 0) {
    await addReconciliationRun(systemEm(s.orm), {
      rail: rail.rail,
      windowStart: from,
      windowEnd: to,
      listed: result.listed,
      late: result.late,
    });
  }
  return result;
}
