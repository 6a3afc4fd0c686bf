import { expect } from 'chai';
import Decimal from 'decimal.js';
import fc from 'fast-check';
import { ASSETS, type AssetCode, assetDecimals, isAssetCode, pegOf } from '../../domain/assets';
import { Dec, divDown, divUp, formatAmount, mulDown, parseAmountValue, toAmount } from '../../domain/money';
import { cambioErrorOf } from '../helpers/errors';

// A value with exactly `dp` fractional digits, from an integer number of minor units.
const amountArb = (asset: AssetCode, max = 10n ** 18n): fc.Arbitrary<Dec> =>
  fc.bigInt({ min: -max, max }).map((units) => new Dec(`${units}e-${assetDecimals(asset)}`));

describe('domain/assets', () => {
  it('has 20 assets: 16 fiat at 2 decimals, 4 stablecoins at 6', () => {
    expect(ASSETS).to.have.length(20);
    const six = ASSETS.filter((a) => assetDecimals(a) === 6);
    expect(six).to.deep.equal(['USDC', 'USDT', 'EURC', 'BRLT']);
    expect(ASSETS.filter((a) => assetDecimals(a) === 2)).to.have.length(16);
  });

  it('pegs stablecoins to their fiat and fiat to itself', () => {
    expect([pegOf('USDC'), pegOf('USDT'), pegOf('EURC'), pegOf('BRLT')]).to.deep.equal(['USD', 'USD', 'EUR', 'BRL']);
    expect(pegOf('GBP')).to.equal('GBP');
  });

  it('recognises asset codes exactly', () => {
    expect(isAssetCode('USD')).to.equal(true);
    expect(isAssetCode('usd')).to.equal(false);
    expect(isAssetCode('BTC')).to.equal(false);
    expect(isAssetCode(undefined)).to.equal(false);
  });
});

describe('domain/money parseAmountValue', () => {
  for (const asset of ASSETS) {
    const dp = assetDecimals(asset);
    it(`${asset}: accepts ${dp} decimals, rejects ${dp + 1}`, () => {
      const ok = `12.${'3'.repeat(dp)}`;
      expect(parseAmountValue(ok, asset).toFixed(dp)).to.equal(ok);
      const err = cambioErrorOf(() => parseAmountValue(`12.${'3'.repeat(dp + 1)}`, asset, { path: 'sourceAmount' }));
      expect(err.code).to.equal('INVALID_AMOUNT_PRECISION');
      expect(err.details).to.deep.equal({ path: 'sourceAmount', asset, decimals: dp });
    });
  }

  it('counts trailing zeros as precision the client asked for', () => {
    expect(cambioErrorOf(() => parseAmountValue('1.500', 'USD')).code).to.equal('INVALID_AMOUNT_PRECISION');
  });

  it('accepts integers and leading zeros', () => {
    expect(parseAmountValue('100', 'USD').toFixed()).to.equal('100');
    expect(parseAmountValue('007.50', 'EUR').toFixed()).to.equal('7.5');
  });

  for (const bad of ['', '1.', '.5', '1e3', '+1', ' 1', '1 ', '1,00', 'abc', '--1', '0x10', 'NaN', 'Infinity']) {
    it(`rejects malformed ${JSON.stringify(bad)} with VALIDATION_ERROR`, () => {
      const err = cambioErrorOf(() => parseAmountValue(bad, 'USD', { path: 'targetAmount' }));
      expect(err.code).to.equal('VALIDATION_ERROR');
      const errors = err.details.errors as { path: string; message: string }[];
      expect(errors).to.have.length(1);
      expect(errors[0].path).to.equal('targetAmount');
      expect(errors[0].message).to.be.a('string').and.not.equal('');
    });
  }

  it('rejects zero and negatives by default (positive: true)', () => {
    for (const v of ['0', '0.00', '-0', '-1', '-0.01']) {
      expect(cambioErrorOf(() => parseAmountValue(v, 'USD')).code).to.equal('INVALID_AMOUNT');
    }
  });

  it('allows zero and negatives with positive: false, normalising -0', () => {
    expect(parseAmountValue('-5.25', 'USD', { positive: false }).toFixed()).to.equal('-5.25');
    const z = parseAmountValue('-0.00', 'USD', { positive: false });
    expect(z.isZero() && !z.isNeg()).to.equal(true);
  });

  it('checks precision before sign', () => {
    expect(cambioErrorOf(() => parseAmountValue('-1.234', 'USD')).code).to.equal('INVALID_AMOUNT_PRECISION');
  });

  it('parses without binary float error', () => {
    expect(parseAmountValue('0.1', 'USD').plus(parseAmountValue('0.2', 'USD')).toFixed()).to.equal('0.3');
    expect(parseAmountValue('123456789012345678901234.567890', 'USDC').toFixed()).to.equal(
      '123456789012345678901234.56789',
    );
  });
});

describe('domain/money formatAmount / toAmount', () => {
  for (const asset of ASSETS) {
    const dp = assetDecimals(asset);
    it(`${asset}: pads to exactly ${dp} decimals`, () => {
      expect(formatAmount(new Dec('5.12'), asset)).to.equal(dp === 2 ? '5.12' : '5.120000');
      expect(formatAmount('100', asset)).to.equal(`100.${'0'.repeat(dp)}`);
      expect(toAmount(new Dec('1'), asset)).to.deep.equal({ value: `1.${'0'.repeat(dp)}`, asset, decimals: dp });
    });
    it(`${asset}: refuses to round silently`, () => {
      expect(() => formatAmount(new Dec(`1.${'0'.repeat(dp)}1`), asset)).to.throw(/quantize/);
    });
  }

  it('formats zero, negative zero, negatives and huge values', () => {
    expect(formatAmount(new Dec('-0'), 'USD')).to.equal('0.00');
    expect(formatAmount(new Dec('-5.1'), 'EUR')).to.equal('-5.10');
    expect(formatAmount(new Dec('1e25'), 'USD')).to.equal('10000000000000000000000000.00');
    expect(formatAmount(new Dec('1e-6'), 'USDC')).to.equal('0.000001');
  });

  it('rejects non-finite values', () => {
    expect(() => formatAmount(new Dec('Infinity'), 'USD')).to.throw();
    expect(() => formatAmount(new Dec('NaN'), 'USD')).to.throw();
  });

  it('property: always exactly `decimals` fraction digits', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ASSETS).chain((a) => fc.tuple(fc.constant(a), amountArb(a))),
        ([asset, x]) => {
          const s = formatAmount(x, asset);
          expect(s).to.match(/^-?\d+\.\d+$/);
          expect(s.split('.')[1]).to.have.length(assetDecimals(asset));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('property: parse(format(x)) == x', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ASSETS).chain((a) => fc.tuple(fc.constant(a), amountArb(a))),
        ([asset, x]) => {
          const back = parseAmountValue(formatAmount(x, asset), asset, { positive: false });
          expect(back.eq(x)).to.equal(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('domain/money directed arithmetic', () => {
  it('rounds divisions toward or away from zero as named', () => {
    const [one, two, three] = [new Dec('1'), new Dec('2'), new Dec('3')];
    // Checked in a wider context: 0.33…34 × 3 needs 41 digits to show it exceeds 1.
    const Wide = Dec.clone({ precision: 100 });
    expect(new Wide(divDown(one, three)).times(three).lt(one)).to.equal(true);
    expect(new Wide(divUp(one, three)).times(three).gt(one)).to.equal(true);
    // 2/3 rounds half-up to ...67 in the default context; divDown must not.
    expect(divDown(two, three).lt(two.div(three))).to.equal(true);
    expect(divUp(two, three).eq(two.div(three))).to.equal(true);
  });

  it('multiplies exactly within 40 digits and truncates beyond', () => {
    expect(mulDown(new Dec('1.23'), new Dec('5.373')).toFixed()).to.equal('6.60879');
    const big = new Dec('9'.repeat(30));
    expect(mulDown(big, big).lte(new Dec('1e60'))).to.equal(true);
  });

  it('the Dec clone does not touch the global Decimal config', () => {
    expect(Dec.precision).to.equal(40);
    expect(Decimal.precision).to.equal(20);
  });
});
