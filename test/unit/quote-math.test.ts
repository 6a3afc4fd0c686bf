import { expect } from 'chai';
import Decimal from 'decimal.js';
import fc from 'fast-check';
import { ASSETS, type AssetCode, FIAT_ASSETS, type FiatCode, assetDecimals } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { Dec, formatAmount } from '../../domain/money';
import { DEFAULT_MID_RATES, TableRateSource } from '../../domain/rates';
import { type QuoteInput, type QuoteResult, computeQuote, formatRate } from '../../domain/quote-math';
import { cambioErrorOf, codeOf } from '../helpers/errors';

const rates = new TableRateSource(DEFAULT_MID_RATES);
const Wide = Dec.clone({ precision: 200 }); // assertions must never round
const d = (s: string): Dec => new Dec(s);
const minorUnit = (a: AssetCode): Dec => new Dec(`1e-${assetDecimals(a)}`);

const quote = (sourceAsset: AssetCode, targetAsset: AssetCode, amounts: Partial<QuoteInput>): QuoteResult =>
  computeQuote({ rates, sourceAsset, targetAsset, ...amounts });

describe('domain/quote-math formatRate', () => {
  it('writes up to 10 decimals, truncated, trailing zeros removed', () => {
    expect(formatRate(d('5.3730000000'))).to.equal('5.373');
    expect(formatRate(d('1'))).to.equal('1');
    expect(formatRate(d('0.18518518518518518'))).to.equal('0.1851851851');
    expect(formatRate(d('0.99999999999'))).to.equal('0.9999999999');
    expect(formatRate(d('18.6'))).to.equal('18.6');
  });
});

describe('domain/quote-math computeQuote examples', () => {
  it('USD→BRL fixed source: 100.00 USD at 5.373 = 537.30 BRL, 0.50 USD spread fee', () => {
    const q = quote('USD', 'BRL', { sourceAmount: d('100') });
    expect(formatRate(q.midRate)).to.equal('5.4');
    expect(formatRate(q.effectiveRate)).to.equal('5.373');
    expect(formatAmount(q.targetAmount, 'BRL')).to.equal('537.30');
    expect(formatAmount(q.sourceAmount, 'USD')).to.equal('100.00');
    expect(q.spread.toFixed()).to.equal('0.005');
    expect(q.fee && formatAmount(q.fee.amount, 'USD')).to.equal('0.50');
    expect(q.fee?.asset).to.equal('USD');
    expect(q.fee?.percentage.toFixed()).to.equal('0.005');
  });

  it('fixed source rounds the target DOWN', () => {
    expect(quote('USD', 'BRL', { sourceAmount: d('1.00') }).targetAmount.toFixed(2)).to.equal('5.37'); // 5.373
    expect(quote('USD', 'BRL', { sourceAmount: d('0.19') }).targetAmount.toFixed(2)).to.equal('1.02'); // 1.02087
  });

  it('fixed target rounds the source UP: 1000.00 BRL costs 186.12 USD (1000 / 5.373 = 186.1157…)', () => {
    const q = quote('USD', 'BRL', { targetAmount: d('1000') });
    expect(formatAmount(q.sourceAmount, 'USD')).to.equal('186.12');
    expect(formatAmount(q.targetAmount, 'BRL')).to.equal('1000.00');
    expect(q.fee && formatAmount(q.fee.amount, 'USD')).to.equal('0.93'); // 0.9306 half-up
  });

  it('fixed target inverts an exact fixed source', () => {
    expect(quote('USD', 'BRL', { targetAmount: d('537.30') }).sourceAmount.toFixed(2)).to.equal('100.00');
  });

  it('BRL→USD uses the truncated inverse mid', () => {
    const q = quote('BRL', 'USD', { sourceAmount: d('100') });
    expect(formatRate(q.midRate)).to.equal('0.1851851851');
    expect(formatRate(q.effectiveRate)).to.equal('0.1842592591');
    expect(q.targetAmount.toFixed(2)).to.equal('18.42');
    expect(q.fee?.amount.toFixed(2)).to.equal('0.50');
    expect(q.fee?.asset).to.equal('BRL');
  });

  it('crosses through USD: EUR→BRL mid 6.26450116, effective 6.2331786542', () => {
    const q = quote('EUR', 'BRL', { sourceAmount: d('250.00') });
    expect(formatRate(q.midRate)).to.equal('6.26450116');
    expect(formatRate(q.effectiveRate)).to.equal('6.2331786542');
    expect(q.targetAmount.toFixed(2)).to.equal('1558.29'); // 1558.29466355
  });

  it('stablecoins price like their peg but still pay the spread across currencies', () => {
    const q = quote('USDC', 'BRL', { sourceAmount: d('100.000000') });
    expect(formatRate(q.effectiveRate)).to.equal('5.373');
    expect(q.targetAmount.toFixed(2)).to.equal('537.30');
    expect(q.fee?.amount.toFixed(6)).to.equal('0.500000');
    const r = quote('BRL', 'USDT', { sourceAmount: d('100') });
    expect(r.targetAmount.toFixed(6)).to.equal('18.425925'); // 18.42592591 truncated at 6 dp
  });

  for (const asset of ASSETS) {
    it(`${asset}→${asset} is 1:1 with no spread, either way round`, () => {
      const amount = d(`42.${'7'.repeat(assetDecimals(asset))}`);
      for (const q of [quote(asset, asset, { sourceAmount: amount }), quote(asset, asset, { targetAmount: amount })]) {
        expect(q.sourceAmount.eq(amount) && q.targetAmount.eq(amount)).to.equal(true);
        expect(formatRate(q.effectiveRate)).to.equal('1');
        expect(formatRate(q.midRate)).to.equal('1');
        expect(q.spread.isZero()).to.equal(true);
        expect(q.fee).to.equal(null);
      }
    });
  }

  const pegPairs = [
    ['USDC', 'USD'],
    ['USD', 'USDC'],
    ['USDT', 'USD'],
    ['USD', 'USDT'],
    ['USDC', 'USDT'],
    ['USDT', 'USDC'],
    ['EURC', 'EUR'],
    ['EUR', 'EURC'],
    ['BRLT', 'BRL'],
    ['BRL', 'BRLT'],
  ] as const;
  for (const [a, b] of pegPairs) {
    it(`${a}→${b} is at par with zero spread and no fee`, () => {
      const q = quote(a, b, { sourceAmount: d('10') });
      expect(formatRate(q.effectiveRate)).to.equal('1');
      expect(q.targetAmount.eq('10')).to.equal(true);
      expect(q.fee).to.equal(null);
    });
  }

  it('par conversion into fewer decimals truncates, and fixed target rounds up', () => {
    expect(quote('USDC', 'USD', { sourceAmount: d('1.234567') }).targetAmount.toFixed(2)).to.equal('1.23');
    expect(formatAmount(quote('USDC', 'USD', { targetAmount: d('1.23') }).sourceAmount, 'USDC')).to.equal('1.230000');
    expect(formatAmount(quote('USD', 'USDC', { targetAmount: d('1.000001') }).sourceAmount, 'USD')).to.equal('1.01');
  });

  it('honours spreadBps, and a zero spread has no fee line', () => {
    expect(formatRate(quote('USD', 'BRL', { sourceAmount: d('1'), spreadBps: 100 }).effectiveRate)).to.equal('5.346');
    const free = quote('USD', 'BRL', { sourceAmount: d('1'), spreadBps: 0 });
    expect(formatRate(free.effectiveRate)).to.equal('5.4');
    expect(free.fee).to.equal(null);
  });

  it('a fee that rounds to zero is still disclosed', () => {
    const q = quote('USD', 'BRL', { sourceAmount: d('0.50') }); // 0.0025 → 0.00
    expect(q.fee?.amount.isZero()).to.equal(true);
    expect(q.fee?.percentage.toFixed()).to.equal('0.005');
  });
});

describe('domain/quote-math computeQuote errors', () => {
  it('needs exactly one of sourceAmount / targetAmount', () => {
    expect(codeOf(() => quote('USD', 'BRL', {}))).to.equal('VALIDATION_ERROR');
    expect(codeOf(() => quote('USD', 'BRL', { sourceAmount: d('1'), targetAmount: d('1') }))).to.equal(
      'VALIDATION_ERROR',
    );
  });

  it('rejects zero, negative and over-precise amounts', () => {
    expect(codeOf(() => quote('USD', 'BRL', { sourceAmount: d('0') }))).to.equal('INVALID_AMOUNT');
    expect(codeOf(() => quote('USD', 'BRL', { targetAmount: d('-1') }))).to.equal('INVALID_AMOUNT');
    expect(codeOf(() => quote('USD', 'BRL', { sourceAmount: d('1.001') }))).to.equal('INVALID_AMOUNT_PRECISION');
    expect(codeOf(() => quote('USD', 'USDC', { targetAmount: d('1.0000001') }))).to.equal('INVALID_AMOUNT_PRECISION');
  });

  it('rejects a source too small to buy one minor unit of the target', () => {
    expect(codeOf(() => quote('PHP', 'USD', { sourceAmount: d('0.01') }))).to.equal('INVALID_AMOUNT');
    expect(codeOf(() => quote('USDC', 'USD', { sourceAmount: d('0.009999') }))).to.equal('INVALID_AMOUNT');
    expect(() => quote('PHP', 'USD', { sourceAmount: d('0.01') })).to.throw(/too small/);
    // The field as every other amount error names it (a JSON pointer), so a client maps it to the same form field.
    const err = cambioErrorOf(() => quote('PHP', 'USD', { sourceAmount: d('0.01') }));
    expect(err.details).to.include({ path: '/sourceAmount' });
  });

  it('a rate that rounds to zero at 10 decimals is 503 RATES_UNAVAILABLE for the pair, not a crash', () => {
    const tiny = new TableRateSource({ ...DEFAULT_MID_RATES, GBP: `0.${'0'.repeat(307)}1` }); // 1e-308 per USD
    const err = cambioErrorOf(() =>
      computeQuote({ rates: tiny, sourceAsset: 'USD', targetAsset: 'GBP', sourceAmount: d('100') }),
    );
    expect(err.code).to.equal('RATES_UNAVAILABLE');
    expect(err.details).to.include({ asset: 'GBP', retryAfterSeconds: 30 });
    expect(err.message).to.contain('USD→GBP rounds to zero at 10 decimals');
    // Both legs inside the range a source may send (1e-9 .. 1e9 per USD), at its two ends: 1e-18 GBP per MXN.
    const far = new TableRateSource({ ...DEFAULT_MID_RATES, MXN: '1000000000', GBP: '0.000000001' });
    for (const amount of [{ sourceAmount: d('100') }, { targetAmount: d('100') }]) {
      const inner = cambioErrorOf(() =>
        computeQuote({ rates: far, sourceAsset: 'MXN', targetAsset: 'GBP', ...amount }),
      );
      expect(inner.code).to.equal('RATES_UNAVAILABLE');
    }
  });

  it('the mirror, a rate near 10^18: a fixed target costs one minor unit at least, rounded up, never zero', () => {
    const far = new TableRateSource({ ...DEFAULT_MID_RATES, MXN: '1000000000', GBP: '0.000000001' });
    const q = computeQuote({ rates: far, sourceAsset: 'GBP', targetAsset: 'MXN', targetAmount: d('1000.00') });
    expect(q.sourceAmount.toFixed(2)).to.equal('0.01');
    expect(new Wide(q.sourceAmount).times(q.effectiveRate).gte(q.targetAmount)).to.equal(true);
  });

  it('is not affected by a caller Decimal with the global precision (20)', () => {
    const q = quote('BRL', 'USDC', { sourceAmount: new Decimal('123456789012345678.99') });
    const exact = new Wide('123456789012345678.99').times(q.effectiveRate);
    expect(q.targetAmount.toFixed(6)).to.equal(exact.toDecimalPlaces(6, Decimal.ROUND_DOWN).toFixed(6));
  });
});

describe('domain/quote-math properties', () => {
  // Random positive amounts with the asset's exact precision, from 1 minor unit to 10^15 units.
  const amountOf = (a: AssetCode): fc.Arbitrary<Dec> =>
    fc
      .bigInt({ min: 1n, max: 10n ** (15n + BigInt(assetDecimals(a))) })
      .map((u) => new Dec(`${u}e-${assetDecimals(a)}`));
  const pairWithAmount = fc
    .tuple(fc.constantFrom(...ASSETS), fc.constantFrom(...ASSETS), fc.integer({ min: 0, max: 300 }))
    .chain(([s, t, bps]) => fc.tuple(fc.constant(s), fc.constant(t), fc.constant(bps), amountOf(s), amountOf(t)));

  it('fixed source: target ≤ source × effectiveRate, by less than one minor unit, and eff ≤ mid', () => {
    fc.assert(
      fc.property(pairWithAmount, ([s, t, spreadBps, amount]) => {
        let q: QuoteResult;
        try {
          q = quote(s, t, { sourceAmount: amount, spreadBps });
        } catch (err) {
          // Only legitimate failure: the source buys less than one minor unit of the target.
          expect((err as CambioError).code).to.equal('INVALID_AMOUNT');
          expect(
            new Wide(amount)
              .times(
                computeQuote({ rates, sourceAsset: s, targetAsset: t, targetAmount: minorUnit(t), spreadBps })
                  .effectiveRate,
              )
              .lt(minorUnit(t)),
          ).to.equal(true);
          return;
        }
        const gross = new Wide(q.sourceAmount).times(q.effectiveRate);
        expect(q.sourceAmount.eq(amount)).to.equal(true);
        expect(q.targetAmount.lte(gross)).to.equal(true);
        expect(gross.minus(q.targetAmount).lt(minorUnit(t))).to.equal(true);
        expect(q.targetAmount.decimalPlaces()).to.be.at.most(assetDecimals(t));
        expect(q.effectiveRate.lte(q.midRate)).to.equal(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('fixed target: source × effectiveRate ≥ target, and one minor unit less would not be', () => {
    fc.assert(
      fc.property(pairWithAmount, ([s, t, spreadBps, , amount]) => {
        const q = quote(s, t, { targetAmount: amount, spreadBps });
        expect(q.targetAmount.eq(amount)).to.equal(true);
        expect(new Wide(q.sourceAmount).times(q.effectiveRate).gte(q.targetAmount)).to.equal(true);
        expect(new Wide(q.sourceAmount).minus(minorUnit(s)).times(q.effectiveRate).lt(q.targetAmount)).to.equal(true);
        expect(q.sourceAmount.decimalPlaces()).to.be.at.most(assetDecimals(s));
        // Re-quoting the computed source as fixed source delivers at least the target.
        expect(quote(s, t, { sourceAmount: q.sourceAmount, spreadBps }).targetAmount.gte(amount)).to.equal(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('the fee is source × spread half-up, in the source asset', () => {
    fc.assert(
      fc.property(pairWithAmount, ([s, t, spreadBps, amount]) => {
        const q = quote(s, t, { targetAmount: amount.toDecimalPlaces(assetDecimals(t)).plus(minorUnit(t)), spreadBps });
        if (q.spread.isZero()) return void expect(q.fee).to.equal(null);
        const expected = new Wide(q.sourceAmount)
          .times(q.spread)
          .toDecimalPlaces(assetDecimals(s), Decimal.ROUND_HALF_UP);
        expect(q.fee?.amount.eq(expected)).to.equal(true);
        expect(q.fee?.asset).to.equal(s);
      }),
      { numRuns: 500 },
    );
  });

  it('invariants hold for arbitrary rate tables too', () => {
    const rateStr = fc
      .tuple(fc.bigInt({ min: 1n, max: 10n ** 6n }), fc.integer({ min: 0, max: 3 }))
      .map(([u, dp]) => new Dec(`${u}e-${dp}`).toFixed());
    const table = fc.tuple(...FIAT_ASSETS.map(() => rateStr)).map((vals) => {
      const t = Object.fromEntries(FIAT_ASSETS.map((c, i) => [c, vals[i]])) as Record<FiatCode, string>;
      return { ...t, USD: '1' };
    });
    fc.assert(
      fc.property(table, pairWithAmount, (tbl, [s, t, spreadBps, src, tgt]) => {
        const src2 = new TableRateSource(tbl);
        const fixedTarget = computeQuote({ rates: src2, sourceAsset: s, targetAsset: t, targetAmount: tgt, spreadBps });
        expect(new Wide(fixedTarget.sourceAmount).times(fixedTarget.effectiveRate).gte(tgt)).to.equal(true);
        try {
          const q = computeQuote({ rates: src2, sourceAsset: s, targetAsset: t, sourceAmount: src, spreadBps });
          expect(q.targetAmount.lte(new Wide(src).times(q.effectiveRate))).to.equal(true);
        } catch (err) {
          if (!(err instanceof CambioError) || err.code !== 'INVALID_AMOUNT') throw err;
        }
      }),
      { numRuns: 300 },
    );
  });
});
