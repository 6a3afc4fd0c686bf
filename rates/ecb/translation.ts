// eurofxref-daily.xml into our rows: `<Cube time='YYYY-MM-DD'>` holding `<Cube currency='USD' rate='1.1601'/>`,
// units per 1 EUR, attributes in single quotes (the parser takes either quote), published about 16:00 CET on TARGET
// days. Attribute values stay text: a rate never becomes a JS number. Only the assets Cambio quotes are kept.
import { XMLParser } from 'fast-xml-parser';
import { FIAT_ASSETS } from '../../domain/assets';
import { FetchedRates, SourceAnswerError } from '../source';
import { positiveDecimal, refusalReason } from '../values';

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  parseAttributeValue: false,
  parseTagValue: false,
  isArray: (name) => name === 'Cube',
});

type Cube = { time?: unknown; currency?: unknown; rate?: unknown; Cube?: Cube[] };

// The ECB publishes "around 16:00 CET": the instant is that hour in Frankfurt, CET or CEST as the date has it.
function publishedAt(day: string): Date {
  for (const offset of ['+01:00', '+02:00']) {
    const at = new Date(`${day}T16:00:00${offset}`);
    const hour = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', hourCycle: 'h23' })
      .format(at)
      .padStart(2, '0');
    if (hour === '16') return at;
  }
  return new Date(`${day}T15:00:00Z`);
}

const WANTED = FIAT_ASSETS.filter((a) => a !== 'EUR');

export function translateDaily(text: string): FetchedRates {
  let doc: { Envelope?: { Cube?: Cube[] } };
  try {
    doc = parser.parse(text, true) as typeof doc;
  } catch {
    throw new SourceAnswerError('ecb', 'the answer is not XML');
  }
  // Envelope > Cube > Cube time=... > Cube currency=... rate=...; the latest day first when there are several.
  const days = (doc.Envelope?.Cube ?? []).flatMap((c) => c.Cube ?? []).filter((c) => typeof c.time === 'string');
  const day = days
    .filter((c) => /^\d{4}-\d{2}-\d{2}$/.test(c.time as string))
    .sort((a, b) => (b.time as string).localeCompare(a.time as string))[0];
  if (!day) throw new SourceAnswerError('ecb', 'no Cube with a time attribute');
  const sourceTime = publishedAt(day.time as string);
  const given = new Map<string, unknown>();
  for (const c of day.Cube ?? []) if (typeof c.currency === 'string') given.set(c.currency, c.rate);
  const out: FetchedRates = { base: 'EUR', rates: [], refused: [] };
  for (const currency of WANTED) {
    const raw = given.get(currency);
    const mid = positiveDecimal(raw);
    if (mid === undefined) out.refused.push({ currency, reason: refusalReason(raw) });
    else out.rates.push({ currency, mid, sourceTime });
  }
  return out;
}
