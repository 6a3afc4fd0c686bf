// Waiting for the booking horizon (db/repositories/booking-horizon.ts, decisions 0112 and 0187): a read of the ledger
// as it stood at an instant (a balance `asOf`, a statement, an issued period) gives its final answer only once every
// transaction that booked before that instant has committed or rolled back; until then a posting stamped before it
// can still appear.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Em } from '../db/orm';
import { bookingMarker, databaseClock, endedUpTo } from '../db/repositories/booking-horizon';
import { CambioError } from '../domain/errors';

// The last transactions before an instant are usually milliseconds from their COMMIT, so the first look comes soon; a
// longer one (a request's transaction, bounded by DB_STATEMENT_TIMEOUT_MS and DB_IDLE_IN_TRANSACTION_TIMEOUT_MS per
// step) is polled once a second, one small read each.
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 1000;
/** How long a request's read waits for the horizon before it answers 503 (a transaction is seconds at most). */
export const READ_MAX_WAIT_MS = 5000;

// This process's horizon per database (keyed by its ORM's configuration): every posting booked before it has ended
// (a database clock reading, microseconds). It only grows, and an instant at or before it needs no read at all: the
// common `asOf` of the past costs nothing.
const settledUpTo = new WeakMap<object, string>();

export interface HorizonOptions {
  /** Called before each pause (an activity heartbeats with it; `detail` says what it waits for). */
  progress?: (detail: Record<string, string>) => void;
  /** An instant still ahead of the database's clock: false at once instead of waiting for the clock to reach it. */
  pastOnly?: boolean;
  /** Give up after this long: 503 SERVICE_UNAVAILABLE (a request must not wait on a stuck transaction for ever). */
  maxWaitMs?: number;
}

/**
 * Returns true once every posting booked before `instant` (`YYYY-MM-DDTHH:MM:SS.ffffffZ`, as isoMicros writes it)
 * has committed or rolled back, so a read of the ledger at that instant made now is the one made at any later time.
 * First the database's clock must be past it (a client's or Temporal's clock may be ahead); then a marker above every
 * transaction id assigned so far, and no transaction at or below it still running. With none open, three short
 * reads; an instant the process has already seen settled, none. `em` outside a transaction.
 */
export async function untilBookedBefore(em: Em, instant: string, opts: HorizonOptions = {}): Promise<boolean> {
  const horizon = settledUpTo.get(em.config) ?? '';
  if (instant <= horizon) return true;
  const started = Date.now();
  let pause = FIRST_POLL_MS;
  const wait = async (waitingFor: string) => {
    if (opts.maxWaitMs !== undefined && Date.now() - started >= opts.maxWaitMs) {
      const message = `the ledger at ${instant} is not settled yet (${waitingFor}); retry shortly`;
      throw new CambioError('SERVICE_UNAVAILABLE', message, { retryAfterSeconds: 1 });
    }
    opts.progress?.({ waitingFor, instant });
    await sleep(pause);
    pause = Math.min(pause * 2, MAX_POLL_MS);
  };
  let clock = await databaseClock(em);
  while (clock < instant) {
    if (opts.pastOnly) return false;
    await wait('database clock');
    clock = await databaseClock(em);
  }
  const marker = await bookingMarker(em);
  pause = FIRST_POLL_MS;
  while (!(await endedUpTo(em, marker))) await wait(`transactions up to ${marker} to end`);
  // Everything booked before `clock` was assigned its id before the marker was read: settled too.
  if (clock > (settledUpTo.get(em.config) ?? '')) settledUpTo.set(em.config, clock);
  return true;
}
