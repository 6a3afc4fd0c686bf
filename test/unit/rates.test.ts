import { expect } from 'chai';
import fc from 'fast-check';
import { ASSETS, type AssetCode, FIAT_ASSETS, type FiatCode, pegOf } from '../../domain/assets';
import { Dec } from '../../domain/money';
import {
  DEFAULT_MID_RATES,
  type RateLeg,
  type RateSource,
  TableRateSource,
  midRate,
  provenanceOf,
  spreadFor,
  usdValue,
} from '../../domain/rates';

const rates = new TableRateSource(DEFAULT_MID_RATES);
const OXR_TIME = new Date('2026-12-01T12:00:00Z');

/** A primary that quotes some stablecoins on their own rows (OXR may), the rest of the table's assets at their peg. */
class QuotingSource implements RateSource {
  constructor(private readonly own: Partial<Record<AssetCode, string>>) {}

  midPerUsd(asset: AssetCode): Dec {
    return this.legOf(asset).mid;
  }

  legOf(asset: AssetCode): RateLeg {
    const own = this.own[asset];
    return { mid: own === undefined ? rates.midPerUsd(asset) : new Dec(own), source: 'oxr', sourceTime: OXR_TIME };
  }

  quotesOwnRate(asset: AssetCode): boolean {
    return this.own[asset] !== undefined;
  }
}
// Wide context for checks, so the assertions themselves never round.
const Wide = Dec.clone({ precision: 120 });

describe('domain/rates TableRateSource', () => {
  it('has a positive string rate for every fiat currency, USD = 1', () => {
    expect(Object.keys(DEFAULT_MID_RATES).sort()).to.deep.equal([...FIAT_ASSETS].sort());
    for (const code of FIAT_ASSETS) {
      expect(DEFAULT_MID_RATES[code]).to.be.a('string');
      expect(new Dec(DEFAULT_MID_RATES[code]).gt('0')).to.equal(true);
    }
    expect(rates.midPerUsd('USD').eq('1')).to.equal(true);
    expect(rates.midPerUsd('BRL').toFixed()).to.equal('5.4');
  });

  it('answers stablecoins with their peg rate', () => {
    for (const coin of ['USDC', 'USDT', 'EURC', 'BRLT'] as const) {
      expect(rates.midPerUsd(coin).eq(rates.midPerUsd(pegOf(coin)))).to.equal(true);
    }
  });

  const withRate = (code: FiatCode, value: unknown): Record<FiatCode, string> =>
    ({ ...DEFAULT_MID_RATES, [code]: value }) as Record<FiatCode, string>;

  for (const [label, table] of [
    ['a comma decimal', withRate('BRL', '5,40')],
    ['exponent notation', withRate('BRL', '5e0')],
    ['a negative rate', withRate('BRL', '-5.40')],
    ['a zero rate', withRate('EUR', '0.000')],
    ['a number instead of a string', withRate('EUR', 0.86)],
    ['a missing currency', withRate('SEK', undefined)],
    ['USD other than 1', withRate('USD', '1.01')],
  ] as const) {
    it(`rejects a table with ${label}`, () => {
      expect(() => new TableRateSource(table)).to.throw(Error);
    });
  }

  it('accepts USD written as "1.0000"', () => {
    expect(() => new TableRateSource(withRate('USD', '1.0000'))).not.to.throw();
  });
});

describe('domain/rates midRate', () => {
  it('is exactly 1 for the same asset and for pegged pairs', () => {
    for (const [a, b] of [
      ['USD', 'USD'],
      ['USDC', 'USD'],
      ['USD', 'USDT'],
      ['USDC', 'USDT'],
      ['EURC', 'EUR'],
      ['BRL', 'BRLT'],
      ['PHP', 'PHP'],
    ] as const) {
      expect(midRate(rates, a, b).toFixed()).to.equal('1');
    }
  });

  it('prices a stablecoin against its peg from the quote of it, when the source quotes it on its own', () => {
    // 0.95 USDC per USD: a stablecoin the source quotes is priced from that quote in every pair, its peg's too.
    const oxr = new QuotingSource({ USDC: '0.95' });
    expect(midRate(oxr, 'USD', 'USDC').toFixed()).to.equal('0.95');
    expect(midRate(oxr, 'USDC', 'USD').toFixed(10)).to.equal('1.0526315789');
    expect(midRate(oxr, 'USDC', 'USDT').toFixed(10)).to.equal('1.0526315789');
    expect(midRate(oxr, 'USDC', 'BRL').toFixed(10)).to.equal('5.6842105263');
    // The pair still exchanges a stablecoin for its peg: no spread.
    expect(spreadFor('USD', 'USDC').isZero()).to.equal(true);
    expect(provenanceOf(oxr, 'USD', 'USDC')).to.deep.equal({ source: 'oxr', sourceTime: OXR_TIME });
    // A pair without the quoted coin, and the same asset, stay 1:1 without a rate.
    expect(midRate(oxr, 'USD', 'USDT').toFixed()).to.equal('1');
    expect(midRate(oxr, 'USDC', 'USDC').toFixed()).to.equal('1');
    expect(provenanceOf(oxr, 'USDT', 'USD')).to.deep.equal({ source: 'peg', sourceTime: null });
  });

  it('keeps a pegged pair exactly 1, from no rate, when no source quotes the stablecoin on its own', () => {
    const oxr = new QuotingSource({ BRLT: '5.5' });
    for (const source of [rates, oxr]) {
      for (const [a, b] of [
        ['USD', 'USDC'],
        ['USDT', 'USDC'],
        ['EURC', 'EUR'],
      ] as const) {
        expect(midRate(source, a, b).toFixed(), `${a}/${b}`).to.equal('1');
        expect(spreadFor(a, b).isZero(), `${a}/${b}`).to.equal(true);
        expect(provenanceOf(source, a, b), `${a}/${b}`).to.deep.equal({ source: 'peg', sourceTime: null });
      }
    }
  });

  it('quotes USD pairs straight from the table', () => {
    expect(midRate(rates, 'USD', 'BRL').toFixed()).to.equal('5.4');
    expect(midRate(rates, 'USDC', 'MXN').toFixed()).to.equal('18.6');
  });

  it('inverts USD pairs, truncated at 40 significant digits', () => {
    expect(midRate(rates, 'BRL', 'USD').toFixed()).to.equal('0.1851851851851851851851851851851851851851');
  });

  it('crosses through USD: EUR→BRL = 5.40 / 0.8620', () => {
    const r = midRate(rates, 'EUR', 'BRL');
    expect(r.toFixed(10)).to.equal('6.2645011601');
    expect(midRate(rates, 'EURC', 'BRLT').eq(r)).to.equal(true);
  });

  it('property: never overstates the exact cross rate, and is within 1e-39 relative', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ASSETS), fc.constantFrom(...ASSETS), (base, quote) => {
        const r = new Wide(midRate(rates, base, quote));
        const exact = new Wide(rates.midPerUsd(quote)).div(rates.midPerUsd(base));
        expect(r.lte(exact)).to.equal(true);
        expect(exact.minus(r).div(exact).lt('1e-39')).to.equal(true);
      }),
      { numRuns: 400 },
    );
  });
});

describe('domain/rates spreadFor', () => {
  it('is zero for the same asset and a stablecoin against its own peg', () => {
    const pairs = [
      ['USD', 'USD'],
      ['USDC', 'USD'],
      ['USD', 'USDC'],
      ['USDT', 'USD'],
      ['USDC', 'USDT'],
      ['USDT', 'USDC'],
      ['EURC', 'EUR'],
      ['EUR', 'EURC'],
      ['BRLT', 'BRL'],
      ['BRL', 'BRLT'],
      ['USDC', 'USDC'],
    ] as const;
    for (const [a, b] of pairs) expect(spreadFor(a, b).isZero(), `${a}/${b}`).to.equal(true);
  });

  it('is 50 bps (0.005) between different currencies, including across stablecoins', () => {
    const pairs = [
      ['USD', 'BRL'],
      ['BRL', 'USD'],
      ['USDC', 'EURC'],
      ['EURC', 'USD'],
      ['BRLT', 'USDT'],
      ['GBP', 'EUR'],
    ] as const;
    for (const [a, b] of pairs) expect(spreadFor(a, b).toFixed(), `${a}/${b}`).to.equal('0.005');
  });

  it('honours a configured bps and rejects nonsense', () => {
    expect(spreadFor('USD', 'BRL', 125).toFixed()).to.equal('0.0125');
    expect(spreadFor('USD', 'BRL', 0).isZero()).to.equal(true);
    expect(spreadFor('USDC', 'USD', 125).isZero()).to.equal(true);
    for (const bad of [-1, 1.5, 10_000, Number.NaN]) expect(() => spreadFor('USD', 'BRL', bad)).to.throw(RangeError);
  });
});

describe('domain/rates usdValue', () => {
  it('is the amount itself for USD and USD stablecoins', () => {
    expect(usdValue(rates, new Dec('123.45'), 'USD').toFixed()).to.equal('123.45');
    expect(usdValue(rates, new Dec('0.000001'), 'USDC').toFixed()).to.equal('0.000001');
  });

  it('divides by the mid per USD, unrounded', () => {
    expect(usdValue(rates, new Dec('540'), 'BRL').toFixed()).to.equal('100');
    expect(usdValue(rates, new Dec('540'), 'BRLT').toFixed()).to.equal('100');
    expect(usdValue(rates, new Dec('1'), 'BRL').toFixed(12)).to.equal('0.185185185185');
    expect(usdValue(rates, new Dec('862'), 'EURC').toFixed()).to.equal('1000');
  });

  it('values a USD stablecoin the source quotes on its own at that quote, as a quote of it would', () => {
    const oxr = new QuotingSource({ USDC: '0.95' });
    expect(usdValue(oxr, new Dec('950'), 'USDC').toFixed()).to.equal('1000');
    expect(usdValue(oxr, new Dec('950'), 'USDT').toFixed()).to.equal('950');
    expect(usdValue(oxr, new Dec('950'), 'USD').toFixed()).to.equal('950');
  });
});
