import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Orm } from '../db/orm';
import { sweepReceivedPayments } from '../payments/inbound-payment-sweep';
import { every } from './periodic';

// A record is normally decided within a second of being written; one still RECEIVED after this long lost its
// reporter (a crash between recording and asking the deposit's workflow) and waits for the sweep.
const RECEIVED_AFTER_SECONDS = 60;
const SWEEP_EVERY_MS = 30_000;
// A pass decides at most this many (in batches of 100, four at a time, each within its deadline): bounded even when
// every workflow is slow (ticks that come while a pass runs are skipped); the rest wait for the next pass.
const MAX_PER_PASS = 1000;

type SweepDeps = { orm: Orm; temporal: Client; config: Config };

/**
 * Every worker looks for inbound payments nobody decided and has the deposit's workflow decide them (or leaves them
 * UNMATCHED when it has closed), so a recorded payment is never forgotten. A record whose decision fails is
 * reported to `onError` and the pass goes on.
 */
export function startInboundPaymentSweep(deps: SweepDeps, onError: (err: unknown) => void) {
  const onFailure = (paymentId: string, err: unknown) =>
    onError(new Error(`inbound payment ${paymentId} could not be decided; the next pass retries`, { cause: err }));
  const pass = () =>
    sweepReceivedPayments(deps, { olderThanSeconds: RECEIVED_AFTER_SECONDS, maxPerPass: MAX_PER_PASS, onFailure });
  return every(SWEEP_EVERY_MS, pass, { onError });
}
