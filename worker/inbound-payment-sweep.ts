import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Orm } from '../db/orm';
import { sweepReceivedPayments, SweepResult } from '../payments/inbound-payment-sweep';

// A record is normally decided within a second of being written; one still RECEIVED after this long lost its
// reporter (a crash between recording and asking the deposit's workflow) and waits for the sweep.
const RECEIVED_AFTER_SECONDS = 60;
// A pass decides at most this many (in batches of 100, four at a time, each within its deadline): bounded even when
// every workflow is slow; the rest wait for the next run of the schedule.
const MAX_PER_PASS = 1000;

type SweepDeps = { orm: Orm; temporal: Client; config: Config };

/**
 * Looks for inbound payments nobody decided and has the deposit's workflow decide them (or leaves them UNMATCHED
 * when it has closed), so a recorded payment is never forgotten; the sweep schedule runs it every 30 s
 * (worker/schedules.ts). A record whose decision fails is reported to `onFailure` and the pass goes on. A second
 * sweep at once is harmless: the update id and the conditional UNMATCHED make a second settlement a no-op.
 */
export function sweepInboundPayments(
  deps: SweepDeps,
  onFailure?: (paymentId: string, err: unknown) => void,
): Promise<SweepResult> {
  return sweepReceivedPayments(deps, { olderThanSeconds: RECEIVED_AFTER_SECONDS, maxPerPass: MAX_PER_PASS, onFailure });
}
