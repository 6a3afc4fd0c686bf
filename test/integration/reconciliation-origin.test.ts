// A new deployment does not inherit the PSP's history (decision 0111): its first reconciliation starts at its first
// start with the PSP (or PIX_RECONCILE_FROM), never at the beginning of the PSP account's history. A fresh database of
// its own meets a simulated PSP that already holds older Pix (another deployment's, as when every database `npm start`
// pointed at shared one simulator state): the first run records none of them, a later run's overlap does not reach
// them, and what arrived after the start with no notice is found.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { loadConfig, type Config } from '../../config';
import { openOrm, systemEm, type Orm } from '../../db/orm';
import { migrate } from '../../db/migrate';
import { reconcileRail, recordRailStart } from '../../payments/reconciliation';
import { pixRailFromConfig, type PixRail } from '../../rails/pix';
import { providerRails } from '../../rails';
import { SIM_CLIENT, startSimulator, type SimulatorProc } from '../helpers/psp-simulator';
import { stack } from '../helpers/stack';

const { createDatabase, dropDatabase, withDatabase } = require('../../scripts/lib/postgres');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('reconciliation: a new deployment starts at its own origin', function () {
  this.timeout(120000);
  let psp: SimulatorProc;
  const opened: Array<{ orm: Orm; url: string; rail: PixRail }> = [];
  // Pix the PSP holds from before the deployments below existed.
  const old: string[] = [];

  /** A fresh database, migrated, with the PIX rail of the test's PSP; `env` as the deployment's environment. */
  async function deployment(env: Record<string, string> = {}) {
    const url: string = withDatabase(
      process.env.DATABASE_URL!,
      `cambio_origin_${process.pid}_${randomUUID().slice(0, 8)}`,
    );
    await createDatabase(url);
    await migrate(url);
    const orm = await openOrm(url, { poolMax: 2 });
    const { services } = await stack();
    const pspEnv = { PIX_PSP_URL: psp.apiUrl, PIX_CLIENT_ID: SIM_CLIENT.id, PIX_CLIENT_SECRET: SIM_CLIENT.secret };
    const config: Config = { ...loadConfig({ ...process.env, ...pspEnv, ...env }), databaseUrl: url };
    const rail = pixRailFromConfig(config)!;
    opened.push({ orm, url, rail });
    return { orm, config, rail, settle: { orm, temporal: services.temporal, config } };
  }

  /** A Pix to the receiving key that no notice announces (only a reconciliation can find it). */
  async function pixAtPsp(valor: string): Promise<string> {
    const { config } = await stack();
    const res = await psp.control('POST', '/pix', { valor, chave: config.pix.receivingKey, notices: 0 });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.endToEndId as string;
  }

  const recorded = async (orm: Orm) =>
    (
      (await systemEm(orm).execute(`select end_to_end_id from inbound_payments order by created_at`)) as Array<{
        end_to_end_id: string;
      }>
    ).map((r) => r.end_to_end_id);

  before(async () => {
    psp = await startSimulator();
    old.push(await pixAtPsp('11.00'), await pixAtPsp('12.00'));
    // The PSP's clock and the database's: the deployments below start strictly after these Pix.
    await sleep(50);
  });

  after(async () => {
    for (const { orm, url, rail } of opened) {
      await rail.close();
      await orm.close(true);
      await dropDatabase(url);
    }
    await psp?.stop();
  });

  it('the first run lists from the first start: no older Pix is recorded, a later one with no notice is', async () => {
    const d = await deployment();
    // The deployment's first start with its PSP, as the API and the worker record it; a restart keeps it.
    await recordRailStart(d.orm, providerRails(d.config));
    const [origin] = await systemEm(d.orm).execute(`select since from rail_origins where rail = 'PIX_KEY'`);
    await sleep(20);
    await recordRailStart(d.orm, providerRails(d.config));
    const [kept] = await systemEm(d.orm).execute(`select since from rail_origins where rail = 'PIX_KEY'`);
    expect(new Date(kept.since).toISOString()).to.equal(new Date(origin.since).toISOString());

    const late = await pixAtPsp('13.00');
    const first = await reconcileRail(d.settle, d.rail);
    expect(Date.parse(first.windowStart)).to.equal(new Date(origin.since).getTime());
    expect(first).to.deep.include({ listed: 1, late: 1, known: 0 });
    expect(await recorded(d.orm)).to.deep.equal([late]);

    // The next run's overlap reaches back before its window, never before the first run's start.
    const second = await reconcileRail(d.settle, d.rail);
    expect(Date.parse(second.windowStart)).to.equal(Date.parse(first.windowStart));
    expect(second).to.deep.include({ listed: 1, late: 0, known: 1 });
    expect(await recorded(d.orm)).to.deep.equal([late]);
    for (const e2e of old) expect(await recorded(d.orm)).to.not.include(e2e);
  });

  it('PIX_RECONCILE_FROM: the first run starts there (the older Pix too), whatever the recorded start', async () => {
    const from = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const d = await deployment({ PIX_RECONCILE_FROM: from });
    expect(d.config.pix.reconcileFrom?.toISOString()).to.equal(new Date(from).toISOString());
    await recordRailStart(d.orm, providerRails(d.config));
    const first = await reconcileRail(d.settle, d.rail, { firstFrom: d.config.pix.reconcileFrom });
    expect(first.windowStart).to.equal(new Date(from).toISOString());
    const all = await recorded(d.orm);
    expect(all).to.include.members(old);
    expect(first.late).to.equal(all.length);
    // Only the first run: the next goes on from where it ended.
    const second = await reconcileRail(d.settle, d.rail, { firstFrom: d.config.pix.reconcileFrom });
    expect(Date.parse(second.windowStart)).to.be.above(Date.parse(from));
    expect(second.late).to.equal(0);

    expect(() => loadConfig({ ...process.env, PIX_RECONCILE_FROM: 'yesterday' })).to.throw(/PIX_RECONCILE_FROM/);
    expect(() => loadConfig({ ...process.env, PIX_RECONCILE_FROM: '2026-12-01T00:00:00' })).to.throw(
      /PIX_RECONCILE_FROM/,
    );
  });
});
