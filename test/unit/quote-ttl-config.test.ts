// QUOTE_TTL_SECONDS is read once at start-up: a value that would expire every quote as it is made (0), or make its
// expiry a time no Date holds (a 20-digit number: every quote request a 500), must stop the process there.
import { expect } from 'chai';
import { loadConfig } from '../../config';

const ttl = (value?: string) => loadConfig(value === undefined ? {} : { QUOTE_TTL_SECONDS: value }).quoteTtlSeconds;

describe('quote TTL (config)', () => {
  it('defaults to 30 s and takes 1 s to a day as given', () => {
    expect(ttl()).to.equal(30);
    for (const v of ['1', '300', '86400']) expect(ttl(v)).to.equal(Number(v));
  });

  it('refuses at start-up a TTL outside 1 s to a day, or no whole number', () => {
    for (const v of ['0', '86401', '99999999999999999999'])
      expect(() => ttl(v), v).to.throw(/QUOTE_TTL_SECONDS must be/);
    for (const v of ['-1', '1.5', '30s']) expect(() => ttl(v), v).to.throw(/QUOTE_TTL_SECONDS must be a whole number/);
  });
});
