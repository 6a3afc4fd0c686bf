import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import supertest from 'supertest';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { createApp } from '../../api/app';
import { noteRatesDeviation } from '../../services/metrics';
import { priceQuote } from '../../services/quotes';
import { formatRate } from '../../domain/quote-math';
import type { Config, RatesConfig } from '../../config';
import { systemEm } from '../../db/orm';
import { latestExchangeRates } from '../../db/repositories/exchange-rates';
import { ASSETS } from '../../domain/assets';
import { Dec } from '../../domain/money';
import { DEFAULT_MID_RATES, TableRateSource } from '../../domain/rates';
import { RAIL_ENTRIES, Rails } from '../../rails/registry';
import { rateBookFromConfig } from '../../rates';
import { ecbConnector } from '../../rates/ecb';
import { brasiliaDay, ptaxConnector } from '../../rates/ptax';
import { odataDate } from '../../rates/ptax/client';
import { pollRateSource, type PollResult } from '../../rates/poll';
import type { RateConnector } from '../../rates/source';
import { queueWorkerOptions } from '../../worker/queues';
import { withdrawToNewKey } from '../helpers/beneficiary-fixtures';
import { cambioWith } from '../helpers/cli';
import { fund, untilStatus } from '../helpers/money';
import { killAll, spawnApi } from '../helpers/processes';
import { activeAccount } from '../helpers/fixtures';
import { ecbDaily, type FakeRateSources, oxrLatest, ptaxDay, startFakeRateSources } from '../helpers/rate-sources';
import { eventually, idem, newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { ensureSchedules, periodicJobs } from '../../worker/schedules';

// More digits than a binary double holds: a rate that passed through a JS number would lose the tail.
const LONG_BRL = '5.40123456789012345678901';
const oxrRates = (overrides: Record<string, string | undefined> = {}) => {
  const rates: Record<string, string> = {};
  for (const [code, mid] of Object.entries({ ...DEFAULT_MID_RATES, BRL: LONG_BRL, ...overrides })) {
    if (code !== 'USD' && mid !== undefined) rates[code] = mid;
  }
  return rates;
};
const ECB_USD = '1.1601'; // 1 / 1.1601 = 0.86199 EUR per USD, beside the primary's 0.8620.
const today = () => brasiliaDay(new Date());
// A day's ECB file is stamped 16:00 Frankfurt time: yesterday's is behind the clock at any hour the tests run, today's
// is ahead of it until then (and refused as such, decision 0164).
const yesterday = () => brasiliaDay(new Date(Date.now() - 86_400_000));
const seconds = (at: Date) => Math.floor(at.getTime() / 1000);
// A PTAX bulletin's `dataHoraCotacao` (Brasília time, UTC-3) for a Unix instant, so that none is ahead of the clock.
const brasiliaStamp = (unixSeconds: number) =>
  new Date((unixSeconds - 3 * 3600) * 1000).toISOString().replace('T', ' ').slice(0, 23);

describe('live exchange rates (local sources in the documented shapes)', function () {
  this.timeout(90_000);
  let fake: FakeRateSources;
  let connection: NativeConnection;
  let railsWorker: Worker;
  let running: Promise<void>;
  let config: Config;
  let c: TestCustomer;
  let accountId: string;
  const railsTaskQueue = `cambio-test-rates-${randomUUID()}`;
  // Each poll's OXR instant is later than the one before (the rows of one run share the table).
  const t1 = seconds(new Date()) - 600;

  before(async () => {
    const { services } = await stack();
    fake = await startFakeRateSources();
    const rates: RatesConfig = {
      sources: ['oxr', 'ptax', 'ecb'],
      pollSeconds: 30,
      maxAgeSeconds: 120,
      maxDeviationPct: '3',
      timeoutMs: 1000,
      oxr: { url: fake.url, appId: 'test-app-id' },
      ptax: { url: fake.url },
      ecb: { url: `${fake.url}/stats/eurofxref/eurofxref-daily.xml` },
    };
    config = { ...services.config, railsTaskQueue, rates };
    connection = await NativeConnection.connect({ address: config.temporalAddress });
    // The rails' queue of this deployment: the poll's activity calls the sources from here.
    railsWorker = await Worker.create({
      connection,
      namespace: config.temporalNamespace,
      taskQueue: railsTaskQueue,
      activities: createActivities({
        config,
        orm: services.orm,
        rates: services.rates,
        temporal: services.temporal,
        // No rail connector: this worker only polls the rate sources.
        rails: new Rails(RAIL_ENTRIES, []),
      }),
      ...queueWorkerOptions('rails'),
    });
    running = railsWorker.run();
    c = await newCustomer();
    accountId = (await activeAccount(c, ['USD', 'BRL', 'EUR'])).id;
  });

  after(async () => {
    railsWorker?.shutdown();
    await running;
    await connection?.close();
    await fake?.close();
  });

  /** One run of the schedule's workflow, as the Temporal Schedule starts it (worker/schedules.ts). */
  async function poll(): Promise<PollResult[]> {
    const { services, config: stackConfig } = await stack();
    return services.temporal.workflow.execute('ratesPollWorkflow', {
      taskQueue: stackConfig.taskQueue,
      workflowId: `rates-poll-test-${randomUUID()}`,
      args: [railsTaskQueue],
    });
  }

  /** An API process of this deployment (its own rates cache), on the stack's database. */
  async function api(overrides: Partial<RatesConfig> = {}, more: Partial<Config> = {}, clock?: () => number) {
    const { services } = await stack();
    const cfg = { ...config, ...more, rates: { ...config.rates, ...overrides } };
    const { book } = rateBookFromConfig(
      cfg,
      services.orm,
      pino({ level: 'silent' }),
      { onDeviation: noteRatesDeviation },
      clock,
    );
    return supertest(createApp({ ...services, config: cfg, rates: book }).callback());
  }

  const quoteOn = (app: ReturnType<typeof supertest>, sourceAsset: string, targetAsset: string, amount = '100.00') =>
    app.post('/api/quotes').set(c.auth).set(idem()).send({ accountId, sourceAsset, targetAsset, sourceAmount: amount });

  it('polls the three sources on the schedule workflow and prices quotes from the primary, digits whole', async () => {
    fake.oxr.body = oxrLatest(t1, oxrRates());
    fake.ptaxDays.set(odataDate(today()), ptaxDay([['5.3990', '5.4010', brasiliaStamp(t1), 'Fechamento']]));
    // The ECB's reference for every currency we quote, per EUR: the primary's mid per USD × USD per EUR.
    const ecbRates: Record<string, string> = { USD: ECB_USD };
    for (const [code, mid] of Object.entries(oxrRates())) {
      if (code !== 'EUR') ecbRates[code] = new Dec(mid).times(ECB_USD).toFixed(6);
    }
    fake.ecb.body = ecbDaily(yesterday(), ecbRates);
    const results = await poll();
    expect(results.map((r) => [r.source, r.error])).to.deep.equal([
      ['oxr', undefined],
      ['ptax', undefined],
      ['ecb', undefined],
    ]);
    const { services } = await stack();
    const rows = await latestExchangeRates(systemEm(services.orm), ['oxr', 'ptax', 'ecb'], ASSETS);
    const brl = rows.find((r) => r.source === 'oxr' && r.currency === 'BRL')!;
    expect(brl.mid).to.equal(LONG_BRL);
    expect(brl.sourceTime.toISOString()).to.equal(new Date(t1 * 1000).toISOString());
    expect(rows.find((r) => r.source === 'ptax' && r.currency === 'BRL')!.mid).to.equal('5.4');
    expect(rows.find((r) => r.source === 'ecb' && r.currency === 'USD')).to.include({ base: 'EUR', mid: '1.1601' });

    const res = await quoteOn(await api(), 'USD', 'BRL', '1000.00');
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    // What the table would give with the same mid: the rate and amount priced from the long decimal, whole.
    const expected = priceQuote(new TableRateSource({ ...DEFAULT_MID_RATES, BRL: LONG_BRL }), 30, {
      accountId,
      sourceAsset: 'USD',
      targetAsset: 'BRL',
      sourceAmount: '1000.00',
    });
    expect(res.body.effectiveRate).to.deep.equal({
      value: expected.effectiveRate,
      base: 'USD',
      quote: 'BRL',
      source: 'oxr',
      sourceTime: new Date(t1 * 1000).toISOString(),
    });
    expect(res.body.targetAmount.value).to.equal(expected.targetAmount.toFixed(2));
  });

  it('GET /api/rates answers the mids quotes would use now, each with its source and time', async () => {
    const app = await api();
    const res = await app.get('/api/rates?base=USD').set(c.auth);
    expect(res.status).to.equal(200);
    expect(res.body.base).to.equal('USD');
    const by = new Map((res.body.rates as { asset: string }[]).map((r) => [r.asset, r]));
    expect(by.has('USD')).to.equal(false);
    expect(by.get('BRL')).to.deep.equal({
      asset: 'BRL',
      mid: formatRate(new Dec(LONG_BRL)),
      source: 'oxr',
      sourceTime: new Date(t1 * 1000).toISOString(),
      unavailable: null,
    });
    expect(by.get('USDC')).to.deep.include({ mid: '1', source: 'peg', sourceTime: null });
    const eur = await app.get('/api/rates?base=EUR').set(c.auth);
    expect(eur.body.rates.find((r: { asset: string }) => r.asset === 'USD').mid).to.equal(
      formatRate(new Dec(1).div('0.8620')),
    );
    expect((await app.get('/api/rates?base=XYZ').set(c.auth)).status).to.equal(400);
    expect((await app.get('/api/rates')).status).to.equal(401);
  });

  it("cambio rates shows the same, with each source's age", async () => {
    const env = {
      RATES_SOURCES: 'oxr,ptax,ecb',
      OXR_URL: fake.url,
      OXR_APP_ID: 'test-app-id',
      PTAX_URL: fake.url,
      ECB_URL: config.rates.ecb.url,
      SANDBOX: 'true',
    };
    const { stdout } = await cambioWith(env, 'rates', '--json');
    const out = JSON.parse(stdout);
    expect(out.sources.map((s: { source: string; role: string }) => [s.source, s.role])).to.deep.equal([
      ['oxr', 'primary'],
      ['ptax', 'reference'],
      ['ecb', 'reference'],
    ]);
    for (const s of out.sources) expect(s.receivedAgeSeconds, s.source).to.be.within(0, 60);
    expect(out.sources[0].sourceAgeSeconds).to.be.at.least(600);
    const brl = out.rates.find((r: { asset: string }) => r.asset === 'BRL');
    expect(brl).to.include({ mid: formatRate(new Dec(LONG_BRL)), source: 'oxr' });
    expect(brl.ageSeconds).to.be.at.least(600);
    const human = await cambioWith(env, 'rates');
    expect(human.stdout).to.match(/^oxr \(primary\) {2}\d+ currencies {2}received \d+s ago {2}latest rate \d+s old$/m);
    expect(human.stdout).to.match(/^USD\/BRL {2}5\.4012345678 {2}oxr {2}\S+ {2}age \d+s$/m);
  });

  it('refuses 0, "5,41", a negative and a missing value from a source: none of them prices anything', async () => {
    const t2 = t1 + 60;
    fake.oxr.body = oxrLatest(t2, oxrRates({ BRL: '"5,41"', MXN: '0', CAD: '-1.3850', GBP: undefined }));
    const [oxr] = await poll();
    expect(oxr.refused).to.deep.equal(
      [
        { currency: 'BRL', reason: 'not a positive decimal: "5,41"' },
        { currency: 'CAD', reason: 'not a positive decimal: "-1.3850"' },
        { currency: 'GBP', reason: 'missing' },
        { currency: 'MXN', reason: 'not a positive decimal: "0"' },
      ].sort((a, b) => ASSETS.indexOf(a.currency as never) - ASSETS.indexOf(b.currency as never)),
    );
    const app = await api();
    // The refused legs still price from the last good row (received within RATES_MAX_AGE_SECONDS); the others moved.
    for (const asset of ['BRL', 'MXN', 'CAD', 'GBP']) {
      const res = await quoteOn(app, 'USD', asset);
      expect(res.status, asset).to.equal(201);
      expect(res.body.effectiveRate.sourceTime, asset).to.equal(new Date(t1 * 1000).toISOString());
    }
    const eur = await quoteOn(app, 'USD', 'EUR');
    expect(eur.body.effectiveRate.sourceTime).to.equal(new Date(t2 * 1000).toISOString());
    const { services } = await stack();
    const rows = await latestExchangeRates(systemEm(services.orm), ['oxr'], ASSETS);
    expect(rows.find((r) => r.currency === 'BRL')!.mid).to.equal(LONG_BRL);
  });

  it('refuses a value outside 1e-9 .. 1e9 alone: the rest of its answer and the other sources are stored', async () => {
    const t3 = t1 + 120;
    // Both are 400,001 digits written out, past Postgres' numeric: stored, they took the whole answer with them.
    fake.oxr.body = oxrLatest(t3, oxrRates({ CAD: '1e400000', NOK: '1E-400000' }));
    const results = await poll();
    expect(results.map((r) => [r.source, r.error])).to.deep.equal([
      ['oxr', undefined],
      ['ptax', undefined],
      ['ecb', undefined],
    ]);
    expect(results[0].refused).to.deep.equal([
      { currency: 'CAD', reason: 'outside 1e-9 .. 1e9: "1e400000"' },
      { currency: 'NOK', reason: 'outside 1e-9 .. 1e9: "1E-400000"' },
    ]);
    const { services } = await stack();
    const rows = await latestExchangeRates(systemEm(services.orm), ['oxr'], ASSETS);
    const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();
    const at = (currency: string) => rows.find((r) => r.currency === currency)!.sourceTime.toISOString();
    expect([at('BRL'), at('EUR'), at('MXN')]).to.deep.equal([iso(t3), iso(t3), iso(t3)]);
    // A refused leg keeps its last good row: CAD's of the first answer (the one before refused it too), NOK's of t2.
    expect([at('CAD'), at('NOK')]).to.deep.equal([iso(t1), iso(t1 + 60)]);
    const eur = await quoteOn(await api(), 'USD', 'EUR');
    expect(eur.status, JSON.stringify(eur.body)).to.equal(201);
    expect(eur.body.effectiveRate.sourceTime).to.equal(iso(t3));
  });

  it("a source whose rows the database refuses is that source's error, logged, not the poll's failure", async () => {
    const { services } = await stack();
    const warnings: { message: string; meta?: Record<string, unknown> }[] = [];
    const log = { warn: (message: string, meta?: Record<string, unknown>) => warnings.push({ message, meta }) };
    // A connector that skips rates/values.ts: a value past numeric reaches the insert.
    const overflowing: RateConnector = {
      name: 'oxr',
      covers: [],
      maxSourceAgeSeconds: 3 * 3600,
      fetchLatest: () =>
        Promise.resolve({
          base: 'USD',
          rates: [{ currency: 'ZZZ', mid: '1e400000', sourceTime: new Date(t1 * 1000) }],
          refused: [],
        }),
    };
    const result = await pollRateSource(services.orm, overflowing, 1000, log);
    expect(result).to.deep.include({ source: 'oxr', stored: 0, refused: [] });
    expect(result.error).to.match(/^not stored: [\s\S]*value overflows numeric format$/);
    expect(warnings.map((w) => w.message)).to.deep.equal(['rates: answer not stored']);
  });

  it('a cross rate that rounds to zero at 10 decimals is 503 RATES_UNAVAILABLE, never a 500', async () => {
    // Both inside the range, at its two ends: 1e-18 GBP per MXN, nothing at 10 decimals.
    fake.oxr.body = oxrLatest(t1 + 180, oxrRates({ MXN: '1e9', GBP: '1e-9' }));
    try {
      const [oxr] = await poll();
      expect([oxr.error, oxr.refused]).to.deep.equal([undefined, []]);
      // Without the ECB, whose fixings of MXN and GBP would refuse both legs before any arithmetic (decision 0193).
      const res = await quoteOn(await api({ sources: ['oxr', 'ptax'] }), 'MXN', 'GBP');
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body.code).to.equal('RATES_UNAVAILABLE');
      expect(res.body.details).to.include({ asset: 'GBP' });
      expect(res.body.details.reason).to.match(/rounds to zero at 10 decimals/);
      expect(res.headers['retry-after']).to.equal('30');
    } finally {
      // The usual rates again, at a later instant, for the tests after this one.
      fake.oxr.body = oxrLatest(t1 + 240, oxrRates());
      await poll();
    }
  });

  it('refuses an answer stamped over 5 minutes past the poll: not stored, never shadowing a later one', async () => {
    const { services } = await stack();
    const ecbBefore = fake.ecb.body;
    // Year 5138: once stored, the latest row by the source's instant for ever.
    fake.oxr.body = oxrLatest(99999999999, oxrRates({ EUR: '0.9' }));
    fake.ecb.body = ecbDaily('5138-11-16', { USD: ECB_USD });
    try {
      const [oxr, ptax, ecb] = await poll();
      expect(oxr.error).to.match(/^stamped 5138-11-16T09:46:39\.000Z, more than 300 s past the poll's clock/);
      expect(ecb.error).to.match(/^stamped 5138-11-16T15:00:00\.000Z, more than 300 s past the poll's clock/);
      expect(ptax.error).to.equal(undefined);
      const rows = await latestExchangeRates(systemEm(services.orm), ['oxr', 'ecb'], ASSETS);
      expect(rows.filter((r) => r.sourceTime.getUTCFullYear() > 3000)).to.deep.equal([]);
    } finally {
      fake.ecb.body = ecbBefore;
    }
    const t5 = t1 + 300;
    fake.oxr.body = oxrLatest(t5, oxrRates());
    await poll();
    const eur = await quoteOn(await api(), 'USD', 'EUR');
    expect(eur.status, JSON.stringify(eur.body)).to.equal(201);
    expect(eur.body.effectiveRate.sourceTime).to.equal(new Date(t5 * 1000).toISOString());

    // Within the skew, a source's clock a little ahead of ours is no refusal.
    const stamped = (aheadMs: number): RateConnector => ({
      name: 'oxr',
      covers: [],
      maxSourceAgeSeconds: 3 * 3600,
      fetchLatest: () =>
        Promise.resolve({
          base: 'USD',
          rates: [{ currency: 'ZZZ', mid: '1', sourceTime: new Date(Date.now() + aheadMs) }],
          refused: [],
        }),
    });
    const silent = { warn: () => {} };
    expect((await pollRateSource(services.orm, stamped(4 * 60_000), 1000, silent)).error).to.equal(undefined);
    expect((await pollRateSource(services.orm, stamped(6 * 60_000), 1000, silent)).error).to.match(/^stamped /);
  });

  it('refuses only the pairs with a leg beyond RATES_MAX_DEVIATION_PCT of its reference, with a metric', async () => {
    // PTAX fixes BRL 11% above the primary: BRL pairs stop, every other pair still quotes.
    fake.ptaxDays.set(
      odataDate(today()),
      ptaxDay([
        ['5.3990', '5.4010', brasiliaStamp(t1), 'Fechamento'],
        ['5.9990', '6.0010', brasiliaStamp(t1 + 60), 'Fechamento'],
      ]),
    );
    await poll();
    const app = await api();
    for (const [from, to] of [
      ['USD', 'BRL'],
      ['EUR', 'BRL'],
      ['BRL', 'USDC'],
    ]) {
      const res = await quoteOn(app, from, to);
      expect(res.status, `${from}→${to}`).to.equal(503);
      expect(res.body.code).to.equal('RATES_UNAVAILABLE');
      expect(res.headers['retry-after']).to.equal('30');
    }
    expect((await quoteOn(app, 'USD', 'EUR')).status).to.equal(201);
    expect((await quoteOn(app, 'USD', 'GBP')).status).to.equal(201);
    expect((await quoteOn(app, 'BRL', 'BRL')).status).to.equal(201);
    const view = await app.get('/api/rates?base=USD').set(c.auth);
    const brl = view.body.rates.find((r: { asset: string }) => r.asset === 'BRL');
    expect(brl).to.deep.include({ mid: null, source: null, sourceTime: null });
    expect(brl.unavailable).to.match(/oxr differs from ptax by \d+\.\d+%, over RATES_MAX_DEVIATION_PCT/);
    const metrics = await app.get('/metrics');
    expect(metrics.text).to.match(/cambio_rates_deviation_breaker_open\{currency="BRL",reference="ptax"\} 1/);
    expect(metrics.text).to.match(/cambio_rates_refused_quotes_total\{asset="BRL"\} [1-9]/);

    // The next fixing agrees again: BRL quotes again.
    fake.ptaxDays.set(odataDate(today()), ptaxDay([['5.3990', '5.4010', brasiliaStamp(t1 + 120), 'Fechamento']]));
    await poll();
    await new Promise((r) => setTimeout(r, 1100)); // the API's cache of a second
    expect((await quoteOn(app, 'USD', 'BRL')).status).to.equal(201);
    expect((await app.get('/metrics')).text).to.match(
      /cambio_rates_deviation_breaker_open\{currency="BRL",reference="ptax"\} 0/,
    );
  });

  it("refuses a primary rate 1000x off the ECB's fixing of any currency it fixes; other pairs quote", async () => {
    // OXR's MXN jumps from 18.60 to 18600 per USD; the ECB's fixing of the first test still says 18.60.
    fake.oxr.body = oxrLatest(t1 + 360, oxrRates({ MXN: '18600' }));
    try {
      await poll();
      const app = await api();
      for (const [from, to] of [
        ['USD', 'MXN'],
        ['MXN', 'BRL'],
      ]) {
        const res = await quoteOn(app, from, to);
        expect(res.status, `${from}→${to} ${JSON.stringify(res.body)}`).to.equal(503);
        expect(res.body.code).to.equal('RATES_UNAVAILABLE');
        expect(res.body.details).to.include({ asset: 'MXN' });
        expect(res.body.details.reason).to.match(/oxr differs from ecb by \d+(\.\d+)?%, over RATES_MAX_DEVIATION_PCT/);
        expect(res.headers['retry-after']).to.equal('30');
      }
      expect((await quoteOn(app, 'USD', 'GBP')).status).to.equal(201);
      const view = await app.get('/api/rates?base=USD').set(c.auth);
      expect(view.body.rates.find((r: { asset: string }) => r.asset === 'MXN')).to.include({ mid: null });
    } finally {
      // The usual rates again, at a later instant, for the tests after this one.
      fake.oxr.body = oxrLatest(t1 + 420, oxrRates());
      await poll();
    }
  });

  it('a source that corrects a rate at the same instant is quoted at its correction, not the old value', async () => {
    const at = t1 + 480;
    fake.oxr.body = oxrLatest(at, oxrRates({ BRL: '5.5' }));
    await poll();
    // OXR answers the same instant again with BRL corrected (its hourly plans keep the hour's timestamp).
    fake.oxr.body = oxrLatest(at, oxrRates({ BRL: '5.4' }));
    try {
      await poll();
      const res = await quoteOn(await api(), 'USD', 'BRL');
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.effectiveRate).to.include({ value: '5.373', sourceTime: new Date(at * 1000).toISOString() });
      expect(res.body.targetAmount.value).to.equal('537.30');
    } finally {
      fake.oxr.body = oxrLatest(t1 + 540, oxrRates());
      await poll();
    }
  });

  it('a primary that keeps answering one old instant (a frozen feed) stops new quotes, pegs still quote', async () => {
    const { services } = await stack();
    // Only the frozen answer's rows, as on a deployment whose source froze before its first poll: OXR's instant is 3
    // days old (past a weekend's) and every poll receives it again, so its received_at stays fresh.
    await systemEm(services.orm).execute(`delete from exchange_rates where source = 'oxr'`);
    const frozen = seconds(new Date()) - 3 * 86_400;
    fake.oxr.body = oxrLatest(frozen, oxrRates());
    try {
      expect((await poll())[0].error).to.equal(undefined);
      expect((await poll())[0].error).to.equal(undefined);
      const app = await api();
      for (const [from, to] of [
        ['USD', 'EUR'],
        ['BRL', 'GBP'],
      ]) {
        const res = await quoteOn(app, from, to);
        expect(res.status, `${from}→${to} ${JSON.stringify(res.body)}`).to.equal(503);
        expect(res.body.code).to.equal('RATES_UNAVAILABLE');
        expect(res.body.details.reason).to.match(
          /^oxr's latest rate is stamped \S+Z, over 54 hours \(194400 s\) old for oxr$/,
        );
        expect(res.headers['retry-after']).to.equal('30');
      }
      expect((await quoteOn(app, 'USD', 'USDC')).status).to.equal(201);
      const view = await app.get('/api/rates?base=USD').set(c.auth);
      expect(view.body.rates.find((r: { asset: string }) => r.asset === 'EUR')).to.include({ mid: null });
    } finally {
      fake.oxr.body = oxrLatest(t1 + 600, oxrRates());
      await poll();
    }
    expect((await quoteOn(await api(), 'USD', 'EUR')).status).to.equal(201);
  });

  it("judges a rate's age by the database's clock, not by an API host's clock off by minutes", async () => {
    fake.oxr.body = oxrLatest(t1 + 630, oxrRates());
    await poll();
    // A host 3 minutes ahead of the worker and the database: the rows just received are not 3 minutes old.
    const ahead = await quoteOn(await api({}, {}, () => Date.now() + 180_000), 'USD', 'EUR');
    expect(ahead.status, JSON.stringify(ahead.body)).to.equal(201);
    // A host 10 minutes behind: rows received over a second ago are over RATES_MAX_AGE_SECONDS=1 all the same.
    await new Promise((r) => setTimeout(r, 1100));
    const behind = await quoteOn(await api({ maxAgeSeconds: 1 }, {}, () => Date.now() - 600_000), 'USD', 'EUR');
    expect(behind.status, JSON.stringify(behind.body)).to.equal(503);
    expect(behind.body.details.reason).to.match(/over RATES_MAX_AGE_SECONDS=1/);
  });

  it('refuses an answer over 1 MiB, declared or streamed: none of it stored, the rows before still price', async () => {
    const { services } = await stack();
    // A valid answer padded to 2 MiB, as a misdirected URL or a broken proxy may send a body of any size: read whole,
    // it all sat in the rails worker's memory, however large, until the poll's timeout.
    const at = t1 + 690;
    fake.oxr.body = oxrLatest(at, oxrRates({ EUR: '0.9' })).replace('{', '{' + ' '.repeat(2 * 1024 * 1024));
    try {
      for (const chunked of [false, true]) {
        fake.oxr.chunked = chunked;
        const [oxr] = await poll();
        expect(oxr.error, `chunked: ${chunked}`).to.equal('oxr: the answer is over 1048576 bytes');
      }
      const rows = await latestExchangeRates(systemEm(services.orm), ['oxr'], ASSETS);
      expect(rows.filter((r) => r.sourceTime.getTime() === at * 1000)).to.deep.equal([]);
    } finally {
      fake.oxr.chunked = false;
      fake.oxr.body = oxrLatest(t1 + 720, oxrRates());
      await poll();
    }
    const eur = await quoteOn(await api(), 'USD', 'EUR');
    expect(eur.status, JSON.stringify(eur.body)).to.equal(201);
    expect(eur.body.effectiveRate.sourceTime).to.equal(new Date((t1 + 720) * 1000).toISOString());
  });

  it('never waits on a source that hangs; a stale primary stops new quotes, locked ones execute', async () => {
    const app = await api();
    const locked = await quoteOn(app, 'BRL', 'USD', '50.00');
    expect(locked.status).to.equal(201);
    fake.oxr.hangMs = 4000;
    try {
      fake.requests.length = 0;
      let pollEnded = false;
      const polling = poll().finally(() => (pollEnded = true));
      // The poll is waiting on the hanging source (its request arrived), for up to RATES_TIMEOUT_MS: a quote now
      // answers from the rows already stored, while the poll still waits.
      await eventually(
        async () => fake.requests.filter((p) => p.startsWith('/api/latest.json')).length,
        (n) => n > 0,
        30000,
        10,
      );
      const during = await quoteOn(app, 'USD', 'EUR');
      expect(during.status).to.equal(201);
      expect(pollEnded, 'the quote answered while the poll still waited on the source').to.equal(false);
      const [oxr, ptax, ecb] = await polling;
      expect(oxr.error).to.equal('no answer within RATES_TIMEOUT_MS=1000');
      expect([ptax.error, ecb.error]).to.deep.equal([undefined, undefined]);
    } finally {
      fake.oxr.hangMs = 0;
    }
    // With a max age of one second, the primary's rows (last received over a second ago) are stale.
    const stale = await api({ maxAgeSeconds: 1 });
    const refused = await quoteOn(stale, 'USD', 'EUR');
    expect(refused.status).to.equal(503);
    expect(refused.body.code).to.equal('RATES_UNAVAILABLE');
    expect(refused.headers['retry-after']).to.equal('30');
    expect((await quoteOn(stale, 'USD', 'USDC')).status).to.equal(201);
    expect((await quoteOn(stale, 'EUR', 'EUR')).status).to.equal(201);
    const deposit = await stale
      .post('/api/operations/deposit')
      .set(c.auth)
      .set(idem())
      .send({ accountId, quoteId: locked.body.id, fundingInstruction: { rail: 'PIX_KEY' } });
    expect(deposit.status, JSON.stringify(deposit.body)).to.equal(201);
    expect(deposit.body.quote.effectiveRate.value).to.equal(locked.body.effectiveRate.value);
  });

  it('outside a sandbox with no source configured, refuses every pair between currencies, not pegs', async () => {
    for (const rates of [{ sources: [] }, { oxr: { url: fake.url, appId: undefined } }] as Partial<RatesConfig>[]) {
      const app = await api(rates, { sandbox: false });
      const res = await quoteOn(app, 'USD', 'BRL');
      expect(res.status).to.equal(503);
      expect(res.body.code).to.equal('RATES_UNAVAILABLE');
      expect(res.headers['retry-after']).to.be.a('string');
      expect((await quoteOn(app, 'USDT', 'USD')).status).to.equal(201);
      expect((await quoteOn(app, 'BRL', 'BRL')).status).to.equal(201);
    }
  });

  it('an API outside a sandbox without a source warns at start and refuses cross-currency quotes', async () => {
    const { config: stackConfig } = await stack();
    try {
      const proc = await spawnApi('rates-no-source-api', stackConfig.taskQueue, { SANDBOX: 'false' });
      expect(proc.output()).to.contain(
        'RATES_SOURCES is not set: every quote between different currencies is 503 RATES_UNAVAILABLE',
      );
      const post = (sourceAsset: string, targetAsset: string) =>
        fetch(`${proc.url}/api/quotes`, {
          method: 'POST',
          headers: { ...c.auth, ...idem(), 'content-type': 'application/json' },
          body: JSON.stringify({ accountId, sourceAsset, targetAsset, sourceAmount: '10.00' }),
        });
      const refused = await post('USD', 'BRL');
      expect(refused.status).to.equal(503);
      expect(refused.headers.get('retry-after')).to.equal('30');
      expect(((await refused.json()) as { code: string }).code).to.equal('RATES_UNAVAILABLE');
      expect((await post('USDC', 'USD')).status).to.equal(201);
    } finally {
      await killAll();
    }
  });

  it('holds for review a withdrawal that no rate can value now, instead of refusing its locked quote', async () => {
    await fund(c, accountId, 'BRL', '10.00');
    // 10.00 BRL is about 1.85 USD, far below the review threshold: only an unknown value holds it.
    const noRates = await api({ sources: [] }, { sandbox: false });
    const res = await withdrawToNewKey(c, accountId, `rates-${randomUUID()}@example.com`, '10.00', noRates);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    await untilStatus(c, res.body.id, 'ON_HOLD');
  });

  it('creates the rates-poll schedule on the rails queue and runs it once as the worker starts', async () => {
    const { services } = await stack();
    const jobs = periodicJobs(config).filter((j) => j.workflowType === 'ratesPollWorkflow');
    expect(jobs.map((j) => [j.id, j.args, j.spec])).to.deep.equal([
      [`${config.taskQueue}-rates-poll`, [railsTaskQueue], { intervals: [{ every: '30 seconds' }] }],
    ]);
    expect(periodicJobs({ ...config, rates: { ...config.rates, sources: ['table'] } }).map((j) => j.id)).not.to.include(
      `${config.taskQueue}-rates-poll`,
    );
    fake.requests.length = 0;
    await ensureSchedules(services.temporal, config, jobs);
    try {
      // The interval's first run is up to 30 s away (within 5 s one time in six): the run at start reads them now.
      await eventually(
        async () => fake.requests.filter((p) => p.startsWith('/api/latest.json')).length,
        (n) => n > 0,
        5_000,
      );
    } finally {
      await services.temporal.schedule.getHandle(jobs[0].id).delete();
    }
  });

  it('PTAX: on a weekend walks back to the latest business day and takes its latest bulletin', async () => {
    fake.ptaxDays.set(
      '11-27-2026',
      ptaxDay([
        ['5.3100', '5.3106', '2026-11-27 10:08:22.61', 'Abertura'],
        ['5.3336', '5.3342', '2026-11-27 13:09:27.153', 'Fechamento'],
        ['5.3200', '5.3206', '2026-11-27 11:04:25.442', 'Intermediário'],
      ]),
    );
    fake.requests.length = 0;
    const sunday = new Date('2026-11-29T15:00:00Z');
    const answer = await ptaxConnector(config.rates).fetchLatest(sunday, AbortSignal.timeout(2000));
    expect(fake.requests.map((p) => /@dataCotacao='([^']+)'/.exec(p)?.[1])).to.deep.equal([
      '11-29-2026',
      '11-28-2026',
      '11-27-2026',
    ]);
    expect(fake.requests[0]).to.contain("@moeda='USD'").and.to.contain('$format=json');
    expect(answer).to.deep.equal({
      base: 'USD',
      rates: [{ currency: 'BRL', mid: '5.3339', sourceTime: new Date('2026-11-27T16:09:27.153Z') }],
      refused: [],
    });
  });

  it('ECB: reads single-quoted attributes as text, stamped 16:00 Frankfurt time, refusing a bad rate', async () => {
    fake.ecb.body = ecbDaily('2026-11-27', { USD: '1.1568', JPY: '180.99', BRL: '6,1699', GBP: '0.87660' });
    const answer = await ecbConnector(config.rates).fetchLatest(new Date(), AbortSignal.timeout(2000));
    expect(answer.base).to.equal('EUR');
    expect(answer.rates).to.deep.equal([
      { currency: 'USD', mid: '1.1568', sourceTime: new Date('2026-11-27T15:00:00Z') },
      { currency: 'GBP', mid: '0.8766', sourceTime: new Date('2026-11-27T15:00:00Z') },
    ]);
    expect(answer.refused).to.deep.include({ currency: 'BRL', reason: 'not a positive decimal: "6,1699"' });
  });
});
