// Reconciliation of a rail (docs/decisions/0080: a Temporal Schedule every PIX_RECONCILE_EVERY_SECONDS): list
// what the provider received over the window since the last run, less an overlap, and record what no notice
// brought. A notice that was lost, or is still being retried by the PSP, is credited by the next run; one that
// arrives after the run finds its record and changes nothing. A deployment's first run starts at its origin on the
// rail (docs/decisions/0111): the first start of one of its processes with the provider configured, or
// PIX_RECONCILE_FROM; never at the beginning of the provider account's history, which may hold another
// deployment's payments (a PSP account, or the sandbox's simulator, shared by several databases).
import { systemEm, type Orm } from '../db/orm';
import { addReconciliationRun, railOrigin, reconciledSpan } from '../db/repositories/rail-reconciliations';
import { RailRejectedError } from '../rails/errors';
import type { ListingCapability } from '../rails/rail';
import { railEntry } from '../rails/registry';
import type { SettleContext } from './record-and-decide';
import { recordReceived } from './rail-payments';

// Each window starts this long before the last one ended: a Pix the PSP timestamps a little before it lists it
// (its clock, its own settlement lag) is still in the next window. Listing a payment twice costs one lookup. No
// window reaches before the first run's start: what came before the deployment's origin is not its business.
export const RECONCILE_OVERLAP_MS = 10 * 60 * 1000;

/**
 * Records the deployment's origin on each rail whose provider this process has (the API and the worker call it at
 * start): the first such start of any process is kept, later ones read it back.
 */
export async function recordRailStart(orm: Orm, rails: string[]): Promise<void> {
  for (const rail of rails) await railOrigin(systemEm(orm), rail);
}

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
  /**
   * References recorded already with another amount or asset than the provider lists (an operator's typo, say): the
   * first record stands, and the difference is for an operator (decision 0303). Not failures: no run changes them.
   */
  disagreeing: string[];
  /** Set when the provider refused the window asked (a 400): the end asked, `windowEnd` being what it listed. */
  narrowedFrom?: string;
  /** The provider's refusal of the longer window, for the operator's log. */
  refusal?: string;
}

/**
 * The provider's list over [from, to], or, when it refuses the window (a 400: a PSP bounds `inicio`-`fim`, which API
 * Pix leaves to it), over its first half, and so on down to `shortest` (twice the overlap, so the next run still
 * moves on). A backlog longer than the PSP lists at once is caught up over runs instead of failing each of them for
 * ever (decision 0279). A refusal of the shortest window is not the window's: it is thrown.
 */
async function listNarrowing(rail: ListingCapability, from: Date, to: Date, shortest: number) {
  let end = to;
  let refusal: string | undefined;
  for (;;) {
    try {
      return { received: await rail.listReceived({ from, to: end }), listedTo: end, refusal };
    } catch (err) {
      const half = Math.floor((end.getTime() - from.getTime()) / 2);
      if (!(err instanceof RailRejectedError) || err.status !== 400 || half < shortest) throw err;
      refusal ??= err.message;
      end = new Date(from.getTime() + half);
    }
  }
}

/**
 * One run over `rail`. The provider call runs outside any transaction; each payment is then recorded and decided
 * on its own (a failure is reported and the run goes on); the run's row, written last, moves the next window on,
 * so a run that died on the way is done again by the next one over the same window.
 */
export async function reconcileRail(
  s: SettleContext,
  rail: ListingCapability & { rail: string },
  opts: {
    now?: Date;
    /** The first run's start when set (PIX_RECONCILE_FROM), instead of the deployment's recorded origin. */
    firstFrom?: Date;
    onFailure?: (endToEndId: string, err: unknown) => void;
    /** Told of each payment recorded already that the provider lists otherwise (what differs). */
    onDisagreement?: (endToEndId: string, disagrees: string) => void;
    onProgress?: () => void;
  } = {},
): Promise<ReconcileResult> {
  const to = opts.now ?? new Date();
  const em = systemEm(s.orm);
  const { firstStart, lastEnd } = await reconciledSpan(em, rail.rail);
  // A rail whose provider dates a payment days before it shows it lists those days again (decision 0185).
  const reach = Math.max(RECONCILE_OVERLAP_MS, railEntry(rail.rail)?.reconciliation?.lookbackMs ?? 0);
  const start =
    lastEnd && firstStart
      ? Math.max(lastEnd.getTime() - reach, firstStart.getTime())
      : (opts.firstFrom ?? (await railOrigin(em, rail.rail))).getTime();
  const from = new Date(Math.min(start, to.getTime()));
  const { received, listedTo, refusal } = await listNarrowing(rail, from, to, 2 * reach);
  const result: ReconcileResult = {
    rail: rail.rail,
    windowStart: from.toISOString(),
    windowEnd: listedTo.toISOString(),
    ...(refusal ? { narrowedFrom: to.toISOString(), refusal } : {}),
    listed: received.length,
    late: 0,
    known: 0,
    failed: [],
    disagreeing: [],
  };
  for (const p of received) {
    try {
      const { created, disagrees } = await recordReceived(s, rail.rail, p);
      result[created ? 'late' : 'known']++;
      if (disagrees) {
        result.disagreeing.push(p.endToEndId);
        opts.onDisagreement?.(p.endToEndId, disagrees);
      }
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
      windowEnd: listedTo,
      listed: result.listed,
      late: result.late,
    });
  }
  return result;
}
