import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Orm } from '../db/orm';
import { sweepUndecidedPayments } from '../payments/inbound-payments';

// A record is normally decided within a second of being written; one still undecided after this long lost its
// reporter (a crash between recording and asking the deposit's workflow) and waits for the sweep.
const UNDECIDED_AFTER_SECONDS = 60;

type SweepDeps = { orm: Orm; temporal: Client; config: Config };

/**
 * Looks for inbound payments nobody decided and has the deposit's workflow decide them (or leaves them UNMATCHED
 * when it has closed), so a recorded payment is never forgotten; the sweep schedule runs it every 30 s
 * (worker/schedules.ts). A second sweep at once is harmless: the update id and the conditional UNMATCHED make a
 * second settlement a no-op.
 */
export function sweepInboundPayments(deps: SweepDeps) {
  return sweepUndecidedPayments(deps, UNDECIDED_AFTER_SECONDS);
}
