// The sandbox's exchange-rate sources, beside the simulated PSP: Open Exchange Rates' latest.json, the Central
// Bank's PTAX over Olinda OData and the ECB's eurofxref-daily.xml, in their public shapes, all three from one slow
// random walk so that quotes move as they would in production and the references stay near the primary. State is
// in memory only (store.ts is the PSP's): a restart starts the walk again from the table below.
import type Koa from 'koa';
import Decimal from 'decimal.js';

// Where the walk starts: indicative mids per 1 USD, late 2026 (Cambio's sandbox table; imported from nowhere, as
// this simulator imports nothing of Cambio's).
const START: Record<string, string> = {
  BRL: '5.40',
  EUR: '0.8620',
  CAD: '1.3850',
  AUD: '1.5200',
  GBP: '0.7480',
  MXN: '18.60',
  HKD: '7.7800',
  SGD: '1.2900',
  PHP: '57.50',
  NZD: '1.7000',
  CHF: '0.8050',
  NOK: '10.10',
  DKK: '6.4300',
  PLN: '3.6600',
  SEK: '9.4500',
};

/** One step every STEP_MS; each moves a mid by at most ±STEP_BPS basis points (about ±1% over a day of steps). */
const STEP_MS = 10_000;
const STEP_BPS = 2;
/** A run that was not asked for a long time catches up this many steps at most. */
const MAX_CATCH_UP = 500;

const D = Decimal.clone({ precision: 30 });

export class RateWalk {
  private mids = new Map(Object.entries(START).map(([c, v]) => [c, new D(v)]));
  private at: number;

  constructor(private readonly now: () => number = Date.now) {
    this.at = Math.floor(now() / STEP_MS) * STEP_MS;
  }

  /** The mids per 1 USD as of the latest step, and that step's instant. */
  current(): { at: Date; mids: Map<string, Decimal> } {
    const due = Math.floor((this.now() - this.at) / STEP_MS);
    for (let i = 0; i < Math.min(due, MAX_CATCH_UP); i++) {
      for (const [c, v] of this.mids) {
        // Uniform in ±STEP_BPS, as an exact decimal of the random draw's first 6 digits.
        const bps = new D(Math.random().toFixed(6)).times(2).minus(1).times(STEP_BPS);
        this.mids.set(c, v.times(new D(1).plus(bps.div(10_000))).toSignificantDigits(8));
      }
    }
    if (due > 0) this.at += due * STEP_MS;
    return { at: new Date(this.at), mids: this.mids };
  }
}

const PTAX_PATH = '/olinda/servico/PTAX/versao/v1/odata/CotacaoMoedaDia(moeda=@moeda,dataCotacao=@dataCotacao)';
const ECB_PATH = '/stats/eurofxref/eurofxref-daily.xml';
const brasilia = (at: Date) => new Date(at.getTime() - 3 * 3600_000); // UTC-3, no daylight saving since 2019
const weekend = (day: Date) => day.getUTCDay() === 0 || day.getUTCDay() === 6;

function latestJson(walk: RateWalk): string {
  const { at, mids } = walk.current();
  const rates = [...mids].map(([c, v]) => `"${c}": ${v.toFixed()}`).join(', ');
  const head = `"disclaimer": "Cambio sandbox", "license": "sandbox", "timestamp": ${at.getTime() / 1000}`;
  return `{${head}, "base": "USD", "rates": {${rates}}}`;
}

/** `MM-DD-YYYY` asked → one bulletin of that business day, or none on a weekend or before its first bulletin. */
function ptaxJson(walk: RateWalk, asked: string): string {
  const m = /^'?(\d{2})-(\d{2})-(\d{4})'?$/.exec(asked);
  const empty = '{"@odata.context": "sandbox", "value": []}';
  if (!m) return empty;
  const day = new Date(`${m[3]}-${m[1]}-${m[2]}T00:00:00Z`);
  const { mids } = walk.current();
  const nowThere = brasilia(new Date());
  const today = nowThere.toISOString().slice(0, 10);
  const dayText = day.toISOString().slice(0, 10);
  if (weekend(day) || dayText > today || (dayText === today && nowThere.getUTCHours() < 10)) return empty;
  // Today: the latest bulletin is the last whole hour since 10:00 (the closing one at 13:00); earlier days: 13:00.
  const hour = dayText === today ? Math.min(13, nowThere.getUTCHours()) : 13;
  const mid = mids.get('BRL')!;
  const buy = mid.times('0.9999').toDecimalPlaces(4);
  const sell = mid.times('1.0001').toDecimalPlaces(4);
  const kind = hour === 13 ? 'Fechamento' : hour === 10 ? 'Abertura' : 'Intermediário';
  return (
    `{"@odata.context": "sandbox", "value": [{"paridadeCompra": 1.0000, "paridadeVenda": 1.0000, ` +
    `"cotacaoCompra": ${buy.toFixed(4)}, "cotacaoVenda": ${sell.toFixed(4)}, ` +
    `"dataHoraCotacao": "${dayText} ${String(hour).padStart(2, '0')}:05:12.345", "tipoBoletim": "${kind}"}]}`
  );
}

/** The latest TARGET day whose 16:00 CET fixing has passed (weekends skipped), units per 1 EUR. */
function ecbXml(walk: RateWalk): string {
  const { mids } = walk.current();
  let day = new Date(Date.now() - 15 * 3600_000); // 16:00 CET is 15:00 UTC: before it, yesterday's counts
  while (weekend(day)) day = new Date(day.getTime() - 86_400_000);
  const eur = mids.get('EUR')!;
  const cubes = [['USD', new D(1)] as const, ...[...mids].filter(([c]) => c !== 'EUR')].map(
    ([c, v]) => `\t\t\t<Cube currency='${c}' rate='${v.div(eur).toSignificantDigits(5).toFixed()}'/>`,
  );
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">`,
    `\t<gesmes:subject>Reference rates</gesmes:subject>`,
    `\t<gesmes:Sender>\n\t\t<gesmes:name>European Central Bank</gesmes:name>\n\t</gesmes:Sender>`,
    `\t<Cube>`,
    `\t\t<Cube time='${day.toISOString().slice(0, 10)}'>`,
    ...cubes,
    `\t\t</Cube>`,
    `\t</Cube>`,
    `</gesmes:Envelope>`,
  ].join('\n');
}

/** The three sources' GET routes; they need no PSP token (OXR wants an app_id, any non-empty one). */
export function rateSourceRoutes(walk: RateWalk = new RateWalk()): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET') return next();
    if (ctx.path === '/api/latest.json') {
      if (!ctx.query.app_id) {
        ctx.status = 401;
        ctx.body = { error: true, status: 401, message: 'missing_app_id' };
        return;
      }
      ctx.type = 'application/json';
      ctx.body = latestJson(walk);
      return;
    }
    if (decodeURIComponent(ctx.path) === PTAX_PATH) {
      ctx.type = 'application/json';
      ctx.body = ptaxJson(walk, String(ctx.query['@dataCotacao'] ?? ''));
      return;
    }
    if (ctx.path === ECB_PATH) {
      ctx.type = 'text/xml';
      ctx.body = ecbXml(walk);
      return;
    }
    return next();
  };
}
