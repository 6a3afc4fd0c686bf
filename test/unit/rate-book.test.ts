import { expect } from 'chai';
import fc from 'fast-check';
import pino from 'pino';
import type { ExchangeRateRow } from '../../db/repositories/exchange-rates';
import type { AssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { Dec } from '../../domain/money';
import { computeQuote } from '../../domain/quote-math';
import { type RateSource, midRate, provenanceOf, spreadFor } from '../../domain/rates';
import type { RatesConfig } from '../../config';
import { type BookSettings, LiveRateBook, NoRates, snapshotOf } from '../../rates/book';
import { ecbConnector } from '../../rates/ecb';
import { ptaxConnector } from '../../rates/ptax';

const T0 = Date.parse('2026-12-01T12:00:00Z');
const row = (source: string, base: string, currency: string, mid: string, receivedAt = T0): ExchangeRateRow => ({
  source,
  base,
  currency,
  mid,
  sourceTime: new Date(receivedAt - 60_000),
  receivedAt: new Date(receivedAt),
});
const settings: BookSettings = {
  primary: 'oxr',
  references: [
    { name: 'ptax', covers: ['BRL'] },
    { name: 'ecb', covers: ['EUR'] },
  ],
  maxAgeSeconds: 120,
  maxSourceAgeSeconds: 3 * 3600,
  maxDeviationPct: '3',
  retryAfterSeconds: 30,
};
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof CambioError) return err;
    throw err;
  }
  throw new Error('expected RATES_UNAVAILABLE');
};

/** What `amount` of `from` buys of `to` through a quote priced as the quote service prices it (fixed source). */
const convert = (rates: RateSource, from: AssetCode, to: AssetCode, amount: Dec, spreadBps?: number): Dec =>
  computeQuote({ rates, sourceAsset: from, targetAsset: to, sourceAmount: amount, spreadBps }).targetAmount;

describe('rates/book', () => {
  it('turns a reference against EUR into units per USD, exactly', () => {
    const rows = [row('oxr', 'USD', 'EUR', '0.8'), row('oxr', 'USD', 'GBP', '0.75'), row('ecb', 'EUR', 'USD', '1.25')];
    // The ECB's 1.25 USD per EUR is 0.8 EUR per USD: no deviation.
    const s = snapshotOf(settings, rows, () => T0);
    expect([...s.deviating.keys()]).to.deep.equal([]);
    expect(midRate(s, 'EUR', 'GBP').toFixed()).to.equal('0.9375');
  });

  it('refuses a leg at RATES_MAX_AGE_SECONDS after its last receipt, not before', () => {
    const rows = [row('oxr', 'USD', 'BRL', '5.4')];
    expect(
      snapshotOf(settings, rows, () => T0 + 120_000)
        .legOf('BRL')
        .mid.toFixed(),
    ).to.equal('5.4');
    const err = refusal(() => snapshotOf(settings, rows, () => T0 + 120_001).legOf('BRL'));
    expect(err.code).to.equal('RATES_UNAVAILABLE');
    expect(err.details).to.deep.include({ asset: 'BRL', retryAfterSeconds: 30 });
    // USD needs no row; a stablecoin follows its peg's leg.
    expect(
      snapshotOf(settings, [], () => T0)
        .legOf('USDC')
        .mid.toFixed(),
    ).to.equal('1');
    expect(refusal(() => snapshotOf(settings, rows, () => T0 + 120_001).legOf('BRLT')).code).to.equal(
      'RATES_UNAVAILABLE',
    );
  });

  it("refuses a leg whose source instant is over the primary's bound, however recently it was received", () => {
    // OXR answering one instant poll after poll (a frozen feed): received just now, stamped hours ago.
    const at = (ageMs: number) =>
      snapshotOf(settings, [{ ...row('oxr', 'USD', 'BRL', '5.4'), sourceTime: new Date(T0 - ageMs) }], () => T0);
    expect(
      at(3 * 3600_000)
        .legOf('BRL')
        .mid.toFixed(),
    ).to.equal('5.4');
    const err = refusal(() => at(3 * 3600_000 + 1).legOf('BRL'));
    expect(err.code).to.equal('RATES_UNAVAILABLE');
    expect(err.details).to.deep.include({
      asset: 'BRL',
      reason: "oxr's latest rate is stamped 2026-12-01T08:59:59.999Z, over 3 hours (10800 s) old for oxr",
      retryAfterSeconds: 30,
    });
    expect(refusal(() => at(3 * 3600_000 + 1).legOf('BRLT')).code).to.equal('RATES_UNAVAILABLE');
    // USD has no row of OXR's, and needs none.
    expect(
      at(3 * 3600_000 + 1)
        .legOf('USDC')
        .mid.toFixed(),
    ).to.equal('1');
  });

  it('opens a deviation breaker strictly above the limit, for the covered leg only', () => {
    const at = (ptax: string) =>
      snapshotOf(
        settings,
        [row('oxr', 'USD', 'BRL', '5.15'), row('oxr', 'USD', 'EUR', '0.9'), row('ptax', 'USD', 'BRL', ptax)],
        () => T0,
      );
    expect(at('5').deviating.has('BRL')).to.equal(false); // exactly 3 %
    const open = at('4.99');
    expect(open.deviating.get('BRL')).to.include({ reference: 'ptax', deviationPct: '3.2064' });
    expect(refusal(() => open.legOf('BRL')).code).to.equal('RATES_UNAVAILABLE');
    expect(open.legOf('EUR').mid.toFixed()).to.equal('0.9');
  });

  it('prices a quoted stablecoin from its quote against its peg too: no round trip beats the direct pair', () => {
    // OXR answers 0.95 USDC per USD. Priced at 1:1, 10000 USD bought 10000 USDC, which bought 56275.10 BRL at
    // 5.373 / 0.95 less the spread, where USD→BRL direct gives 53461.35.
    const s = snapshotOf(settings, [row('oxr', 'USD', 'BRL', '5.373'), row('oxr', 'USD', 'USDC', '0.95')], () => T0);
    const start = new Dec('10000');
    const direct = convert(s, 'USD', 'BRL', start);
    const usdc = convert(s, 'USD', 'USDC', start);
    const viaUsdc = convert(s, 'USDC', 'BRL', usdc);
    expect(direct.toFixed()).to.equal('53461.35');
    expect(viaUsdc.lte(direct), `${viaUsdc.toFixed()} BRL via ${usdc.toFixed()} USDC`).to.equal(true);
    expect(convert(s, 'BRL', 'USD', viaUsdc).lt(start)).to.equal(true);
    expect(usdc.toFixed()).to.equal('9500');
    expect(midRate(s, 'USD', 'USDC').toFixed()).to.equal('0.95');
    expect(provenanceOf(s, 'USD', 'USDC')).to.deep.equal({ source: 'oxr', sourceTime: new Date(T0 - 60_000) });
    expect(s.quotesOwnRate('USDC')).to.equal(true);
    expect(s.quotesOwnRate('USDT')).to.equal(false);
    // A stablecoin it does not quote still follows its peg, 1:1, with no spread.
    expect(convert(s, 'USD', 'USDT', start).toFixed()).to.equal('10000');
    expect(spreadFor('USD', 'USDC').isZero()).to.equal(true);
  });

  it('property: a cycle of quotes through stablecoins, quoted by OXR or not, never ends above its start', () => {
    const chosen = ['USD', 'USDC', 'USDT', 'EUR', 'EURC', 'BRL', 'BRLT'] as const;
    // A mid per USD as a decimal string, between lo and hi thousandths.
    const mid = (lo: number, hi: number) => fc.integer({ min: lo, max: hi }).map((n) => new Dec(n).div(1000).toFixed());
    const coin = (lo: number, hi: number) => fc.option(mid(lo, hi), { nil: undefined });
    fc.assert(
      fc.property(
        fc.record({ BRL: mid(3000, 8000), EUR: mid(700, 1100) }),
        fc.record({ USDC: coin(800, 1250), USDT: coin(800, 1250), EURC: coin(560, 1375), BRLT: coin(2400, 10000) }),
        fc.constantFrom(...chosen),
        fc.constantFrom(...chosen),
        fc.constantFrom(...chosen),
        fc.constantFrom(0, 50),
        (fiat, coins, from, via1, via2, spreadBps) => {
          const rows = Object.entries({ ...fiat, ...coins })
            .filter((e): e is [string, string] => e[1] !== undefined)
            .map(([currency, m]) => row('oxr', 'USD', currency, m));
          const s = snapshotOf({ ...settings, references: [] }, rows, () => T0);
          const start = new Dec('1000000');
          let amount = start;
          for (const [a, b] of [
            [from, via1],
            [via1, via2],
            [via2, from],
          ] as const) {
            amount = convert(s, a, b, amount, spreadBps);
          }
          expect(amount.lte(start), `${from}→${via1}→${via2}→${from}: ${amount.toFixed()}`).to.equal(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("keeps pegged pairs 1:1 without rows, and refuses them once the stablecoin's own quote is stale", () => {
    for (const s of [snapshotOf(settings, [], () => T0), new NoRates('no rate source is configured', 30)]) {
      for (const [a, b] of [
        ['USD', 'USDC'],
        ['EURC', 'EUR'],
        ['BRLT', 'BRL'],
      ] as const) {
        expect(midRate(s, a, b).toFixed(), `${a}/${b}`).to.equal('1');
        expect(provenanceOf(s, a, b), `${a}/${b}`).to.deep.equal({ source: 'peg', sourceTime: null });
        expect(convert(s, a, b, new Dec('100')).toFixed(), `${a}/${b}`).to.equal('100');
      }
    }
    // OXR once quoted USDC: its last quote prices USDC, and when it is stale so is every pair with USDC.
    const rows = [row('oxr', 'USD', 'USDC', '0.999'), row('oxr', 'USD', 'EUR', '0.9', T0 + 60_000)];
    const fresh = snapshotOf(settings, rows, () => T0 + 120_000);
    expect(midRate(fresh, 'USD', 'USDC').toFixed()).to.equal('0.999');
    const stale = snapshotOf(settings, rows, () => T0 + 120_001);
    expect(refusal(() => midRate(stale, 'USD', 'USDC')).code).to.equal('RATES_UNAVAILABLE');
    expect(refusal(() => provenanceOf(stale, 'USDC', 'USDT')).code).to.equal('RATES_UNAVAILABLE');
    expect(midRate(stale, 'USD', 'USDT').toFixed()).to.equal('1');
    expect(midRate(stale, 'USDT', 'EUR').toFixed()).to.equal('0.9');
  });

  it("checks a stablecoin the primary quotes on its own against its peg's reference, and refuses its legs", () => {
    // OXR quotes BRLT at 8.1 per USD while its BRL is 5.4 and PTAX fixed 5.40: BRLT is 50 % off.
    const rows = [
      row('oxr', 'USD', 'BRL', '5.4'),
      row('oxr', 'USD', 'BRLT', '8.1'),
      row('oxr', 'USD', 'EURC', '0.9'),
      row('oxr', 'USD', 'EUR', '0.9'),
      row('ptax', 'USD', 'BRL', '5.40'),
      row('ecb', 'EUR', 'USD', '1.1'),
    ];
    const s = snapshotOf(settings, rows, () => T0);
    expect([...s.deviating.keys()].sort()).to.deep.equal(['BRLT']);
    expect(s.deviating.get('BRLT')).to.deep.equal({
      primary: 'oxr',
      reference: 'ptax',
      primaryMid: '8.1',
      referenceMid: '5.4',
      deviationPct: '50',
    });
    const err = refusal(() => convert(s, 'USD', 'BRLT', new Dec('100')));
    expect(err.code).to.equal('RATES_UNAVAILABLE');
    expect(err.details).to.deep.include({ asset: 'BRLT', retryAfterSeconds: 30 });
    expect(refusal(() => convert(s, 'BRLT', 'BRL', new Dec('100'))).code).to.equal('RATES_UNAVAILABLE');
    expect(convert(s, 'USD', 'BRL', new Dec('100')).toFixed()).to.equal('537.3');
    // EURC at 0.9 is within 3 % of the ECB's 1 / 1.1 = 0.909...: no breaker, priced from its own quote.
    expect(midRate(s, 'USD', 'EURC').toFixed()).to.equal('0.9');
    // Within the limit, BRLT prices from its own quote; when BRL itself is off, BRLT is refused with it.
    const near = snapshotOf(settings, [rows[0], row('oxr', 'USD', 'BRLT', '5.5'), rows[4]], () => T0);
    expect(near.deviating.size).to.equal(0);
    expect(midRate(near, 'BRL', 'BRLT').toFixed(10)).to.equal('1.0185185185');
    const brlOff = snapshotOf(
      settings,
      [row('oxr', 'USD', 'BRL', '6'), row('oxr', 'USD', 'BRLT', '5.4'), rows[4]],
      () => T0,
    );
    expect([...brlOff.deviating.keys()]).to.deep.equal(['BRL']);
    expect(refusal(() => brlOff.legOf('BRLT')).code).to.equal('RATES_UNAVAILABLE');
  });

  it('checks every currency a reference publishes: OXR 1000x off on MXN, or USDC 1000x off USD, is refused', () => {
    // The deployment's references as their connectors cover them (RATES_SOURCES=oxr,ptax,ecb).
    const config = { ptax: { url: '' }, ecb: { url: '' } } as RatesConfig;
    const live: BookSettings = {
      ...settings,
      references: [ptaxConnector(config), ecbConnector(config)].map((c) => ({ name: c.name, covers: c.covers })),
    };
    // The ECB fixes 1.16 USD, 21.576 MXN and 0.86768 GBP per EUR: 18.6 MXN and 0.748 GBP per USD. OXR answers MXN
    // 1000 times that, and 1000 USDC per USD.
    const rows = [
      row('oxr', 'USD', 'MXN', '18600'),
      row('oxr', 'USD', 'GBP', '0.748'),
      row('oxr', 'USD', 'USDC', '1000'),
      row('oxr', 'USD', 'USDT', '1.001'),
      row('ecb', 'EUR', 'USD', '1.16'),
      row('ecb', 'EUR', 'MXN', '21.576'),
      row('ecb', 'EUR', 'GBP', '0.86768'),
    ];
    const s = snapshotOf(live, rows, () => T0);
    expect([...s.deviating.keys()].sort()).to.deep.equal(['MXN', 'USDC']);
    expect(s.deviating.get('MXN')).to.include({ reference: 'ecb', primaryMid: '18600', referenceMid: '18.6' });
    const mxn = refusal(() => convert(s, 'USD', 'MXN', new Dec('100')));
    expect(mxn.details).to.deep.include({ asset: 'MXN', retryAfterSeconds: 30 });
    expect(refusal(() => convert(s, 'USDC', 'USD', new Dec('100'))).details).to.include({ asset: 'USDC' });
    // Within the limit, every other leg still prices.
    expect(convert(s, 'USD', 'GBP', new Dec('100')).toFixed()).to.equal('74.42');
    expect(convert(s, 'USD', 'USDT', new Dec('100')).toFixed()).to.equal('100.1');
  });

  it('answers from rows read at most a second ago, counted from when the read began, however long it ran', async () => {
    let now = T0;
    let reads = 0;
    const book = new LiveRateBook(
      async () => {
        reads++;
        const rows = [row('oxr', 'USD', 'BRL', reads === 1 ? '5.4' : '5.5')];
        now += 900; // a slow read: the rows are of its start
        return { rows, databaseNow: new Date(now) };
      },
      settings,
      pino({ level: 'silent' }),
      {},
      () => now,
    );
    expect((await book.current()).midPerUsd('BRL').toFixed()).to.equal('5.4');
    now += 100; // a second after the rows were read
    expect((await book.current()).midPerUsd('BRL').toFixed()).to.equal('5.5');
    expect(reads).to.equal(2);
  });

  it('reads the rows at most once a second, one read at a time', async () => {
    let now = T0;
    let reads = 0;
    const book = new LiveRateBook(
      async () => {
        reads++;
        return { rows: [row('oxr', 'USD', 'BRL', '5.4')], databaseNow: new Date(now) };
      },
      settings,
      pino({ level: 'silent' }),
      {},
      () => now,
    );
    await Promise.all(Array.from({ length: 50 }, () => book.current()));
    expect(reads).to.equal(1);
    now += 999;
    await book.current();
    expect(reads).to.equal(1);
    now += 1;
    await book.current();
    expect(reads).to.equal(2);
  });
});
