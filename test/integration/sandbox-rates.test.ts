import { expect } from 'chai';
import type { RatesConfig } from '../../config';
import { FIAT_ASSETS } from '../../domain/assets';
import { Dec } from '../../domain/money';
import { ecbConnector } from '../../rates/ecb';
import { oxrConnector } from '../../rates/oxr';
import { ptaxConnector } from '../../rates/ptax';
import { RateWalk } from '../../psp-simulator/rates';
import { stack } from '../helpers/stack';

// The sandbox's sources (psp-simulator/rates/), read by the real connectors as `npm start` points them
// (scripts/start.js): every shape answers, nothing is refused, the references stay near the primary.
describe('sandbox exchange-rate sources (the simulated PSP)', () => {
  it('serves latest.json, PTAX and the ECB XML that the connectors read whole and that agree', async () => {
    const { psp } = await stack();
    const rates: RatesConfig = {
      sources: ['oxr', 'ptax', 'ecb'],
      pollSeconds: 30,
      maxAgeSeconds: 120,
      maxDeviationPct: '3',
      timeoutMs: 2000,
      oxr: { url: psp.url, appId: 'sandbox' },
      ptax: { url: psp.url },
      ecb: { url: `${psp.url}/stats/eurofxref/eurofxref-daily.xml` },
    };
    const now = new Date();
    const signal = () => AbortSignal.timeout(2000);
    const oxr = await oxrConnector(rates)!.fetchLatest(now, signal());
    expect(oxr.refused).to.deep.equal([]);
    expect(oxr.rates.map((r) => r.currency).sort()).to.deep.equal(FIAT_ASSETS.filter((c) => c !== 'USD').sort());
    expect(Date.now() - oxr.rates[0].sourceTime.getTime()).to.be.below(60_000);
    const ptax = await ptaxConnector(rates).fetchLatest(now, signal());
    expect(ptax.refused).to.deep.equal([]);
    const ecb = await ecbConnector(rates).fetchLatest(now, signal());
    expect(ecb.refused).to.deep.equal([]);

    const oxrBrl = new Dec(oxr.rates.find((r) => r.currency === 'BRL')!.mid);
    const ptaxBrl = new Dec(ptax.rates[0].mid);
    const oxrEur = new Dec(oxr.rates.find((r) => r.currency === 'EUR')!.mid);
    const ecbEur = new Dec(1).div(ecb.rates.find((r) => r.currency === 'USD')!.mid);
    expect(oxrBrl.minus(ptaxBrl).abs().div(ptaxBrl).lt('0.03')).to.equal(true);
    expect(oxrEur.minus(ecbEur).abs().div(ecbEur).lt('0.03')).to.equal(true);
  });

  it('walks slowly: each step moves a mid by at most 2 bps, and the mids move', () => {
    let now = 1_800_000_000_000;
    const walk = new RateWalk(() => now);
    const first = new Map(walk.current().mids);
    for (let step = 1; step <= 30; step++) {
      const before = new Map(walk.current().mids);
      now += 10_000;
      const { at, mids } = walk.current();
      expect(at.getTime()).to.equal(now);
      for (const [c, v] of mids) {
        expect(v.div(before.get(c)!).minus(1).abs().lte('0.0002001'), c).to.equal(true);
      }
    }
    const moved = [...walk.current().mids].filter(([c, v]) => !v.eq(first.get(c)!));
    expect(moved.length).to.be.greaterThan(10);
  });
});
