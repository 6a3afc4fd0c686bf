// latest.json into our rows: `{timestamp, base: "USD", rates: {"BRL": 5.4012, ...}}`, units per 1 USD, intraday;
// `timestamp` is Unix seconds. Only the assets Cambio quotes are kept; each one missing or not a positive decimal
// is refused (and logged by the poll), never stored.
import { ASSETS } from '../../domain/assets';
import { FetchedRates, SourceAnswerError } from '../source';
import { parseJsonKeepingNumbers, positiveDecimal, refusalReason } from '../values';

// USD is the base: 1 by definition, not a rate OXR has to send.
const WANTED = ASSETS.filter((a) => a !== 'USD');
const OPTIONAL = new Set<string>(['USDC', 'USDT', 'EURC', 'BRLT']);

export function translateLatest(text: string): FetchedRates {
  let body: unknown;
  try {
    body = parseJsonKeepingNumbers(text);
  } catch {
    throw new SourceAnswerError('oxr', 'the answer is not JSON');
  }
  const { timestamp, base, rates } = (body ?? {}) as { timestamp?: unknown; base?: unknown; rates?: unknown };
  if (base !== 'USD') throw new SourceAnswerError('oxr', `base must be USD, got ${JSON.stringify(base)}`);
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) {
    throw new SourceAnswerError('oxr', `timestamp must be Unix seconds, got ${JSON.stringify(timestamp)}`);
  }
  if (!rates || typeof rates !== 'object') throw new SourceAnswerError('oxr', 'rates is missing');
  const sourceTime = new Date(Number.parseInt(timestamp, 10) * 1000);
  const out: FetchedRates = { base: 'USD', rates: [], refused: [] };
  const given = rates as Record<string, unknown>;
  for (const currency of WANTED) {
    const raw = given[currency];
    // Stablecoins price at their peg unless a source quotes them: their absence is no refusal.
    if (raw === undefined && OPTIONAL.has(currency)) continue;
    const mid = positiveDecimal(raw);
    if (mid === undefined) out.refused.push({ currency, reason: refusalReason(raw) });
    else out.rates.push({ currency, mid, sourceTime });
  }
  return out;
}
