import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../../api/app';
import { openOrm, ormConfig } from '../../db/orm';
import { openDatabaseProbe } from '../../db/repositories/readiness-and-metrics';
import { sessionSettingsOf } from '../../db/session-settings';
import { kill, spawnWorker } from '../helpers/processes';
import { eventually, idem, newCustomer, stack } from '../helpers/stack';
import { activeAccount } from '../helpers/fixtures';
import { fund, quote } from '../helpers/money';

/** The value of one sample line (`name{labels} value`) in Prometheus text, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][\w:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[4]);
  }
  return undefined;
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('observability', function () {
  this.timeout(60_000);

  describe('/metrics', () => {
    it('serves Prometheus text with process metrics and every Cambio metric, without authentication', async () => {
      const { http } = await stack();
      const res = await http.get('/metrics');
      expect(res.status).to.equal(200);
      expect(res.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/);
      for (const name of [
        'process_cpu_user_seconds_total',
        'nodejs_eventloop_lag_seconds',
        'cambio_http_request_duration_seconds',
        'cambio_idempotency_replays_total',
        'cambio_rate_limited_total',
        'cambio_operations',
        'cambio_outbox_backlog',
        'cambio_outbox_oldest_age_seconds',
      ]) {
        expect(res.text).to.contain(`# TYPE ${name} `);
      }
    });

    it('times requests by route pattern and status, never by raw path', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const missing = randomUUID();
      const labels = { method: 'GET', route: '/api/accounts/:accountId', status: '404' };
      const before =
        sample((await http.get('/metrics')).text, 'cambio_http_request_duration_seconds_count', labels) ?? 0;
      expect((await http.get(`/api/accounts/${missing}`).set(c.auth)).status).to.equal(404);
      const text = (await http.get('/metrics')).text;
      expect(sample(text, 'cambio_http_request_duration_seconds_count', labels)).to.equal(before + 1);
      expect(text).not.to.contain(missing);
      expect(text).not.to.contain(c.customerId);
    });

    it('counts idempotent replays and rate-limit rejections by kind', async () => {
      const { http, services } = await stack();
      const c = await newCustomer();
      const account = await activeAccount(c);
      const replaysBefore = sample((await http.get('/metrics')).text, 'cambio_idempotency_replays_total') ?? 0;
      const key = idem();
      const body = { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '10.00' };
      expect((await http.post('/api/quotes').set(c.auth).set(key).send(body)).status).to.equal(201);
      const again = await http.post('/api/quotes').set(c.auth).set(key).send(body);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(sample((await http.get('/metrics')).text, 'cambio_idempotency_replays_total')).to.equal(replaysBefore + 1);

      const limited = supertest(
        createApp({ ...services, config: { ...services.config, rateLimitPerSecond: 1, rateLimitBurst: 1 } }).callback(),
      );
      const rateBefore = sample((await http.get('/metrics')).text, 'cambio_rate_limited_total', { kind: 'rate' }) ?? 0;
      await limited.get('/api/accounts').set(c.auth);
      expect((await limited.get('/api/accounts').set(c.auth)).status).to.equal(429);
      expect(sample((await http.get('/metrics')).text, 'cambio_rate_limited_total', { kind: 'rate' })).to.equal(
        rateBefore + 1,
      );
    });

    it('reports operations by type and status as the database holds them', async () => {
      const { services } = await stack();
      const c = await newCustomer();
      const account = await activeAccount(c);
      await fund(c, account.id, 'BRL', '100.00');
      await quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '1.00' });
      const count = async () => {
        const [row] = await services.orm.em
          .fork()
          .execute(`select count(*) as n from operations where type = 'DEPOSIT' and status = 'COMPLETED'`);
        return Number(row.n);
      };
      // A fresh app has not cached the GROUP BY yet.
      const http = supertest(createApp(services).callback());
      const expected = await count();
      const text = (await http.get('/metrics')).text;
      expect(expected).to.be.at.least(1);
      expect(sample(text, 'cambio_operations', { type: 'DEPOSIT', status: 'COMPLETED' })).to.equal(expected);
    });

    it('reports the outbox backlog and the age of its oldest row', async () => {
      const { http, services } = await stack();
      const workflowId = `metrics-test-${randomUUID()}`;
      const em = services.orm.em.fork();
      // For a task queue no relay serves, so the row stays until this test removes it.
      await em.execute(
        `insert into workflow_starts (workflow_id, workflow_type, task_queue, args, search_attributes, ` +
          `created_at) values (?, 'none', ?, '[]', '{}', now() - interval '90 seconds')`,
        [workflowId, `cambio-no-relay-${randomUUID()}`],
      );
      try {
        // Scrapes within OUTBOX_REFRESH_MS (1 s) of the previous one share its figures: wait for a fresh one.
        const text = await eventually(
          async () => (await http.get('/metrics')).text,
          (t) => (sample(t, 'cambio_outbox_oldest_age_seconds') ?? 0) >= 90,
          5000,
          100,
        );
        expect(sample(text, 'cambio_outbox_backlog')).to.be.at.least(1);
        expect(sample(text, 'cambio_outbox_oldest_age_seconds')).to.be.at.least(90);
      } finally {
        await em.execute(`delete from workflow_starts where workflow_id = ?`, [workflowId]);
      }
    });
  });

  describe('/readyz', () => {
    it('answers 503 when Postgres is unreachable', async () => {
      const { services, config } = await stack();
      const deadUrl = `postgres://postgres@127.0.0.1:${await closedPort()}/cambio`;
      const deadOrm = await MikroORM.init({ ...ormConfig(deadUrl), connect: false });
      const databaseProbe = openDatabaseProbe(deadUrl, sessionSettingsOf(config));
      try {
        const res = await supertest(createApp({ ...services, orm: deadOrm, databaseProbe }).callback()).get('/readyz');
        expect(res.status).to.equal(503);
        expect(res.body).to.deep.include({ status: 'not ready', checks: { postgres: 'unavailable', temporal: 'ok' } });
      } finally {
        await databaseProbe.close();
        await deadOrm.close(true);
      }
    });

    it('answers 200 while every connection of the pool is busy: busy is not unavailable', async () => {
      const { services, config } = await stack();
      const busyOrm = await openOrm(config.databaseUrl, { poolMax: 1, session: sessionSettingsOf(config) });
      // A slow request holds the pool's only connection (a long report, a statement waiting on a lock).
      const slow = busyOrm.em.fork().getConnection().execute('select pg_sleep(3)');
      try {
        await new Promise((r) => setTimeout(r, 200));
        const started = Date.now();
        const res = await supertest(createApp({ ...services, orm: busyOrm }).callback()).get('/readyz');
        expect([res.status, res.body.checks]).to.deep.equal([200, { postgres: 'ok', temporal: 'ok' }]);
        expect(Date.now() - started, 'answered within 1 s').to.be.below(1000);
      } finally {
        await slow;
        await busyOrm.close(true);
      }
    });

    it('answers 503 when Temporal is unreachable', async () => {
      const { services } = await stack();
      const connection = Connection.lazy({ address: `127.0.0.1:${await closedPort()}`, connectTimeout: '1s' });
      const started = Date.now();
      try {
        const temporal = new Client({ connection, namespace: services.config.temporalNamespace });
        const res = await supertest(createApp({ ...services, temporal }).callback()).get('/readyz');
        expect(res.status).to.equal(503);
        expect(res.body).to.deep.include({ status: 'not ready', checks: { postgres: 'ok', temporal: 'unavailable' } });
        // Which rails are configured is configuration, not a probe: it does not make the API unready.
        expect(res.body.rails).to.deep.include({ PIX_KEY: 'psp' });
        // Each check is bounded (2 s), so an orchestrator's probe gets an answer.
        expect(Date.now() - started).to.be.below(5000);
      } finally {
        // The client's retry timer (backoff up to ~1.7 s, stopped by the 2 s deadline) must fire before the
        // channel closes, or it throws on the closed channel.
        await new Promise((r) => setTimeout(r, Math.max(0, started + 5000 - Date.now())));
        await connection.close();
      }
    });
  });

  describe('worker metrics', () => {
    it("serves the Temporal SDK's worker metrics at WORKER_METRICS_ADDRESS", async function () {
      this.timeout(150_000);
      const address = `127.0.0.1:${await closedPort()}`;
      const worker = await spawnWorker('worker-metrics', `metrics-${randomUUID()}`, {
        pollers: 0,
        env: { WORKER_METRICS_ADDRESS: address },
      });
      try {
        const deadline = Date.now() + 120_000;
        let text = '';
        while (Date.now() < deadline && worker.alive()) {
          const res = await fetch(`http://${address}/metrics`).catch(() => undefined);
          text = res?.ok ? await res.text() : '';
          // Slot gauges appear once the worker has registered its pollers.
          if (text.includes('temporal_worker_task_slots_available')) break;
          await new Promise((r) => setTimeout(r, 500));
        }
        expect(worker.alive(), worker.output()).to.equal(true);
        expect(text).to.contain('temporal_worker_task_slots_available');
        expect(text).to.match(/temporal_\w+\{[^}]*task_queue="metrics-/);
      } finally {
        await kill(worker);
      }
    });
  });
});
