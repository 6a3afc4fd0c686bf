// WITHDRAWAL_REVIEW_THRESHOLD_USD (../shared/spec/decisions.md, "Operations"): read once at start-up, so a value that
// is not a plain non-negative decimal must stop the process there rather than change what gets reviewed.
import { expect } from 'chai';
import { loadConfig } from '../../config';
import { Dec } from '../../domain/money';

const threshold = (value?: string) =>
  loadConfig(value === undefined ? {} : { WITHDRAWAL_REVIEW_THRESHOLD_USD: value }).withdrawalReviewThresholdUsd;

describe('withdrawal review threshold (config)', () => {
  it('defaults to 10000 and takes a plain non-negative decimal as given', () => {
    expect(threshold()).to.equal('10000');
    expect(threshold('')).to.equal('10000');
    for (const v of ['0', '2500', '9999.99']) expect(threshold(v)).to.equal(v);
  });

  it('refuses at start-up what would let every withdrawal past review or fail every one', () => {
    // NaN and Infinity are decimals to decimal.js: no amount compares greater, so nothing would be held.
    expect(new Dec('12345').gt(new Dec('NaN'))).to.equal(false);
    for (const v of ['NaN', 'Infinity', '1e4', '10,000', '10 000', '-1', 'abc', ' 10000'])
      expect(() => threshold(v), v).to.throw(/WITHDRAWAL_REVIEW_THRESHOLD_USD must be a non-negative decimal/);
  });
});
