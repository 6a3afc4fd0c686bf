// One poll of one source: read it within the timeout, log what it refused, store what it gave (unless stamped ahead of
// the database's clock). Shared by the poll activity (activities/rates.ts) and the tests that drive a connector against
// a local server.
import type { Orm } from '../db/orm';
import { systemEm } from '../db/orm';
import { addExchangeRates, ratesClock } from '../db/repositories/exchange-rates';
import type { RateConnector } from './source';

// How far past the poll's clock a source's instant may be: clocks disagree by seconds, and the ECB's instant is ours,
// 16:00 Frankfurt time, though it publishes "around" then. Further ahead the stamp is wrong, and a row so stamped would
// be every read's latest (the read goes by the source's instant) until that time came, in year 5138 for OXR's
// `99999999999`: its `received_at` never moving, the leg refused as stale, every later answer unread (decision 0164).
export const MAX_SOURCE_TIME_AHEAD_SECONDS = 300;

export interface PollResult {
  source: string;
  stored: number;
  refused: { currency: string; reason: string }[];
  /**
   * Why nothing was stored from this source in this run (a timeout, a status, a body not in its shape, an instant
   * ahead of the poll's clock, the insert's failure).
   */
  error?: string;
}

interface PollLog {
  warn(message: string, meta?: Record<string, unknown>): void;
}

export async function pollRateSource(
  orm: Orm,
  connector: RateConnector,
  timeoutMs: number,
  log: PollLog,
  now: Date = new Date(),
): Promise<PollResult> {
  let fetched;
  try {
    fetched = await connector.fetchLatest(now, AbortSignal.timeout(timeoutMs));
  } catch (err) {
    const error =
      err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')
        ? `no answer within RATES_TIMEOUT_MS=${timeoutMs}`
        : err instanceof Error
          ? err.message
          : String(err);
    log.warn('rates: source not read this run', { source: connector.name, error });
    return { source: connector.name, stored: 0, refused: [], error };
  }
  for (const r of fetched.refused) {
    log.warn('rates: value refused from source, not used', { source: connector.name, ...r });
  }
  // Received by the database's clock, which the API judges ages by: the worker's own may be minutes off (0298).
  let receivedAt: Date;
  try {
    receivedAt = await ratesClock(systemEm(orm));
  } catch (err) {
    return notStored(connector.name, fetched.refused, err, log);
  }
  const ahead = fetched.rates.find(
    (r) => r.sourceTime.getTime() > receivedAt.getTime() + MAX_SOURCE_TIME_AHEAD_SECONDS * 1000,
  );
  if (ahead) {
    const error =
      `stamped ${ahead.sourceTime.toISOString()}, more than ${MAX_SOURCE_TIME_AHEAD_SECONDS} s past the poll's ` +
      `clock (${receivedAt.toISOString()}): nothing of this answer is stored`;
    log.warn('rates: answer stamped ahead of the clock, not stored', { source: connector.name, error });
    return { source: connector.name, stored: 0, refused: fetched.refused, error };
  }
  try {
    await addExchangeRates(
      systemEm(orm),
      fetched.rates.map((r) => ({ source: connector.name, base: fetched.base, receivedAt, ...r })),
    );
  } catch (err) {
    return notStored(connector.name, fetched.refused, err, log);
  }
  return { source: connector.name, stored: fetched.rates.length, refused: fetched.refused };
}

// This source's rows only: the others of the run are stored apart, and the next run tries again.
function notStored(source: string, refused: PollResult['refused'], err: unknown, log: PollLog): PollResult {
  const error = `not stored: ${err instanceof Error ? err.message : String(err)}`;
  log.warn('rates: answer not stored', { source, error });
  return { source, stored: 0, refused, error };
}
