import { expect } from 'chai';
import pino from 'pino';
import type { ExchangeRateRow } from '../../db/repositories/exchange-rates';
import { CambioError } from '../../domain/errors';
import { midRate } from '../../domain/rates';
import { type BookSettings, LiveRateBook, snapshotOf } from '../../rates/book';

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

  it('reads the rows at most once a second, one read at a time', async () => {
    let now = T0;
    let reads = 0;
    const book = new LiveRateBook(
      async () => {
        reads++;
        return [row('oxr', 'USD', 'BRL', '5.4')];
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
