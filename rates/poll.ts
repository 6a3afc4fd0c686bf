// One poll of one source: read it within the timeout, log what it refused, store what it gave. Shared by the
// poll activity (activities/rates.ts) and the tests that drive a connector against a local server.
import type { Orm } from '../db/orm';
import { systemEm } from '../db/orm';
import { addExchangeRates } from '../db/repositories/exchange-rates';
import type { RateConnector } from './source';

export interface PollResult {
  source: string;
  stored: number;
  refused: { currency: string; reason: string }[];
  /** Why nothing was stored from this source in this run (a timeout, a status, a body not in its shape). */
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
  const receivedAt = new Date();
  await addExchangeRates(
    systemEm(orm),
    fetched.rates.map((r) => ({ source: connector.name, base: fetched.base, receivedAt, ...r })),
  );
  return { source: connector.name, stored: fetched.rates.length, refused: fetched.refused };
}
