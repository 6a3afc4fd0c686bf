// One day's answer of CotacaoMoedaDia: `{value: [{paridadeCompra, paridadeVenda, cotacaoCompra, cotacaoVenda,
// dataHoraCotacao, tipoBoletim}]}`, BRL per unit of the currency asked. The day's latest bulletin counts (the
// closing one once published); mid = (cotacaoCompra + cotacaoVenda) / 2, exact. An empty list is a day without
// bulletins (a weekend, a holiday, a business day before the first one): null, and the caller asks the day before.
import { Dec } from '../../domain/money';
import { FetchedRates, SourceAnswerError } from '../source';
import { parseJsonKeepingNumbers, positiveDecimal, refusalReason } from '../values';

interface Bulletin {
  cotacaoCompra?: unknown;
  cotacaoVenda?: unknown;
  dataHoraCotacao?: unknown;
}

// `2026-11-30 13:09:27.153`, Brasília time: UTC-3 all year since 2019 (no daylight saving).
const BRASILIA_TIME = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2})(\.\d{1,3})?$/;

function bulletinTime(raw: unknown): Date | undefined {
  const m = typeof raw === 'string' ? BRASILIA_TIME.exec(raw) : null;
  if (!m) return undefined;
  const fraction = (m[3] ?? '.').padEnd(4, '0');
  const at = new Date(`${m[1]}T${m[2]}${fraction}-03:00`);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** BRL per 1 `currency` from one day's answer, or null for a day without bulletins. */
export function translateDay(text: string, currency: string): FetchedRates | null {
  let body: unknown;
  try {
    body = parseJsonKeepingNumbers(text);
  } catch {
    throw new SourceAnswerError('ptax', 'the answer is not JSON');
  }
  const value = (body as { value?: unknown } | null)?.value;
  if (!Array.isArray(value)) throw new SourceAnswerError('ptax', 'the answer has no value list');
  if (value.length === 0) return null;
  const dated = (value as Bulletin[])
    .map((b) => ({ b, at: bulletinTime(b.dataHoraCotacao) }))
    .filter((x): x is { b: Bulletin; at: Date } => x.at !== undefined);
  if (dated.length === 0) throw new SourceAnswerError('ptax', 'no bulletin has a readable dataHoraCotacao');
  const latest = dated.reduce((a, x) => (x.at > a.at ? x : a));
  // PTAX quotes BRL per `currency`; our rows are units of `currency`... per USD. For USD the two agree: BRL per USD.
  const out: FetchedRates = { base: currency, rates: [], refused: [] };
  const buy = positiveDecimal(latest.b.cotacaoCompra);
  const sell = positiveDecimal(latest.b.cotacaoVenda);
  if (buy === undefined || sell === undefined) {
    const bad = buy === undefined ? latest.b.cotacaoCompra : latest.b.cotacaoVenda;
    out.refused.push({ currency: 'BRL', reason: refusalReason(bad) });
    return out;
  }
  out.rates.push({ currency: 'BRL', mid: new Dec(buy).plus(sell).div(2).toFixed(), sourceTime: latest.at });
  return out;
}
