// RATES_MAX_AGE_SECONDS against RATES_POLL_SECONDS (decision 0300): a poll brings a source's rows once an interval, so
// a limit no longer than the interval plus one poll's timeout refuses every cross-currency quote for part of every
// interval, all of it but two minutes an hour with an hourly poll. Read once at start-up, it stops the process there.
import { expect } from 'chai';
import { loadConfig } from '../../config';

const rates = (env: Record<string, string>) => loadConfig({ RATES_SOURCES: 'oxr,ptax,ecb', ...env }).rates;

describe('rates config', () => {
  it('takes a max age over one poll interval and its timeout', () => {
    expect(rates({})).to.include({ pollSeconds: 30, maxAgeSeconds: 120, timeoutMs: 5000 });
    expect(rates({ RATES_POLL_SECONDS: '3600', RATES_MAX_AGE_SECONDS: '3606' })).to.include({ maxAgeSeconds: 3606 });
    expect(
      rates({ RATES_POLL_SECONDS: '60', RATES_MAX_AGE_SECONDS: '61', RATES_TIMEOUT_MS: '999' }).maxAgeSeconds,
    ).to.equal(61);
  });

  it('refuses at start-up a max age that a poll on time cannot meet', () => {
    const refused: Record<string, string>[] = [
      // An hourly poll (a cheap OXR plan) with the default limit: 503 for 58 minutes of every hour.
      { RATES_POLL_SECONDS: '3600' },
      { RATES_POLL_SECONDS: '120' },
      { RATES_MAX_AGE_SECONDS: '0' },
      { RATES_MAX_AGE_SECONDS: '35' },
      { RATES_POLL_SECONDS: '60', RATES_MAX_AGE_SECONDS: '61', RATES_TIMEOUT_MS: '1000' },
    ];
    for (const env of refused) {
      expect(() => rates(env), JSON.stringify(env)).to.throw(
        /^RATES_MAX_AGE_SECONDS \(\d+\) must be more than RATES_POLL_SECONDS \(\d+\) plus RATES_TIMEOUT_MS \(\d+\)/,
      );
    }
  });

  it('does not judge them without a polled source', () => {
    expect(loadConfig({ RATES_POLL_SECONDS: '3600' }).rates.pollSeconds).to.equal(3600);
    expect(loadConfig({ RATES_SOURCES: 'table', RATES_MAX_AGE_SECONDS: '0' }).rates.maxAgeSeconds).to.equal(0);
  });
});
