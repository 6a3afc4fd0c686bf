// The sweep: records still RECEIVED long after they were written: the worker's relay sends what a reporter that died
// after its COMMIT left, so these are records from before payments were decisions, or whose deposit's workflow
// could not be reached in time; the sweep queues their decision's signal again and has them decided.
import { systemEm } from '../db/orm';
import { receivedPayments, type ReceivedCursor } from '../db/repositories/inbound-payments';
import { decideInboundPayment, DECISION_DEADLINE_MS, type SettleContext } from './record-and-decide';

export interface SweepOptions {
  /** Only records RECEIVED for longer than this: a live reporter decides its own within a second. */
  olderThanSeconds: number;
  /** Records read per query: a backlog is taken in bounded steps, never loaded whole. */
  batchSize?: number;
  /** At most this many per pass; the next pass continues (oldest first, so none starves). */
  maxPerPass?: number;
  /** Each decision's deadline: a workflow that does not answer in time keeps its record RECEIVED for later. */
  deadlineMs?: number;
  /** Decisions in flight at once: different deposits' workflows decide in parallel. */
  concurrency?: number;
  /** Told about each record whose decision failed; the pass goes on with the others. */
  onFailure?: (paymentId: string, err: unknown) => void;
}

export interface SweepResult {
  seen: number;
  decided: number;
  /** Past their deadline: still RECEIVED, for the next pass. */
  waiting: number;
  failed: number;
}

/**
 * One pass over the RECEIVED records, across customers, in batches. Every record is tried once per pass whatever
 * happens to the others: a failure or a deadline is counted and reported, never the end of the pass. Several
 * workers sweeping at once is harmless: a payment has one decision id, read once by its workflow, and UNMATCHED is
 * conditional, so a second decision is a no-op.
 */
export async function sweepReceivedPayments(s: SettleContext, opts: SweepOptions): Promise<SweepResult> {
  const batchSize = opts.batchSize ?? 100;
  const maxPerPass = opts.maxPerPass ?? 1000;
  const result: SweepResult = { seen: 0, decided: 0, waiting: 0, failed: 0 };
  let after: ReceivedCursor | undefined;
  while (result.seen < maxPerPass) {
    const limit = Math.min(batchSize, maxPerPass - result.seen);
    const batch = await receivedPayments(systemEm(s.orm), opts.olderThanSeconds, limit, after);
    if (batch.length === 0) break;
    result.seen += batch.length;
    const last = batch[batch.length - 1];
    after = { createdAt: last.createdAt, id: last.id };
    let next = 0;
    const lane = async () => {
      while (next < batch.length) {
        const payment = batch[next++];
        try {
          const outcome = await decideInboundPayment(s, payment, opts.deadlineMs ?? DECISION_DEADLINE_MS, undefined, {
            resendSent: true,
          });
          result[outcome === 'DECIDED' ? 'decided' : 'waiting']++;
        } catch (err) {
          result.failed++;
          opts.onFailure?.(payment.id, err);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 4) }, lane));
    if (batch.length < limit) break;
  }
  return result;
}

// A record is normally decided within a second of being written; one still RECEIVED after this long lost its
// reporter (a crash between recording and asking the deposit's workflow) and waits for the sweep.
const RECEIVED_AFTER_SECONDS = 60;
// A scheduled pass decides at most this many (in batches of 100, four at a time, each within its deadline): bounded
// even when every workflow is slow; the rest wait for the next run of the schedule.
const MAX_PER_SCHEDULED_PASS = 1000;

/**
 * The scheduled pass (the sweep schedule runs it every 30 s, worker/schedules.ts, through the periodic activity):
 * looks for inbound payments nobody decided and has the deposit's workflow decide them (or leaves them UNMATCHED
 * when it has closed), so a recorded payment is never forgotten. A record whose decision fails is reported to
 * `onFailure` and the pass goes on.
 */
export function sweepInboundPayments(
  s: SettleContext,
  onFailure?: (paymentId: string, err: unknown) => void,
): Promise<SweepResult> {
  return sweepReceivedPayments(s, {
    olderThanSeconds: RECEIVED_AFTER_SECONDS,
    maxPerPass: MAX_PER_SCHEDULED_PASS,
    onFailure,
  });
}
