// npm run bench:webhooks — webhook delivery against the real stack (API and worker as child processes, one
// Temporal dev server, Postgres). One subscription to OPERATION_REQUESTED points at a receiver in this process;
// 500 deposits (POST /api/quotes + /api/operations/deposit, 20 clients) each commit an event that fans out to
// it, and the delivery workflow POSTs it. Measured: deliveries/s (first event commit to last delivery received),
// event-commit-to-first-attempt latency (events.created_at, written just before COMMIT, to the receiver's
// arrival time: a slight overstatement), once saturated and once paced below saturation, and worker RSS.
// In the same run, the ceiling: a bare workflow with one no-op activity (bench/ceiling-workflow.ts) started by
// 20 clients, completions/s from first start to last activity, on a worker inside this process.
// Targets: deliveries/s >= 0.7x ceiling; latency p50 < 500 ms and p99 < 2 s below saturation; worker RSS < 400 MB.
// Knobs: BENCH_CONCURRENCY (20), BENCH_OPS (500), BENCH_PACED_OPS (100), BENCH_PACED_RATE (per second; default
// 40% of the saturated rate, at most 10).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as PgClient } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { activeAccount, newCustomer, quote } from './lib/cambio';
import { expectStatus } from './lib/http';
import { closedLoop, now, sleep, stats } from './lib/load';
import { CpuMeter, CpuReport, postgresPids, rssOf, waitForQuiet } from './lib/proc';
import { log, Stack, withStack } from './lib/stack';
import { startCeilingWorker } from './lib/ceiling';
import { banner, cpuTable, fmt, ok, rssLine, table } from './lib/report';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 20);
const OPS = Number(process.env.BENCH_OPS || 500);
const PACED_OPS = Number(process.env.BENCH_PACED_OPS || 100);
// Below saturation means below what this machine delivers: unless set, 40% of the saturated phase's rate (at
// most 10/s), so a busy shared machine still measures latency rather than queueing.
const PACED_RATE_SETTING = process.env.BENCH_PACED_RATE ? Number(process.env.BENCH_PACED_RATE) : undefined;
const DELIVERY_TIMEOUT_MS = 120000;

/** The receiver: answers 200 at once and notes when each message id arrived (epoch ms), first and every time. */
function startReceiver(): Promise<{
  url: string;
  firstSeen: Map<string, number>;
  arrivals: Map<string, number[]>;
  close(): Promise<void>;
}> {
  const firstSeen = new Map<string, number>();
  const arrivals = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const at = Date.now();
    const id = String(req.headers['webhook-id']);
    if (!firstSeen.has(id)) firstSeen.set(id, at);
    arrivals.set(id, [...(arrivals.get(id) ?? []), at]);
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  server.keepAliveTimeout = 5000;
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
        firstSeen,
        arrivals,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      }),
    ),
  );
}

interface DeliveryPhase {
  name: string;
  deliveries: number;
  perSecond: number;
  latency: ReturnType<typeof stats>;
  errors: number;
  cpu: CpuReport;
}

async function main(stack: Stack) {
  const receiver = await startReceiver();
  const customer = await newCustomer(stack.databaseUrl, stack.apiUrl, 'Bench Hooks Ltda', CONCURRENCY);
  const accountId = await activeAccount(customer, ['BRL']);
  // Subscribed after onboarding: ASSET_ACTIVATED and the rest came before it and are not sent to it.
  const sub = expectStatus(
    await customer.http.post('/api/subscriptions', {
      url: receiver.url,
      resources: [{ name: 'OPERATION', events: ['OPERATION_REQUESTED'] }],
    }),
    201,
    'subscription',
  );
  log(`subscription ${sub.id} → ${receiver.url}`);

  const ceilingDone: number[] = [];
  const ceilingWorker = await startCeilingWorker(stack, () => ceilingDone.push(now()));
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection, namespace: stack.namespace });
  const pg = new PgClient({ connectionString: stack.databaseUrl });
  await pg.connect();

  const meter = new CpuMeter({
    api: () => [stack.api!.proc.pid!],
    worker: () => [stack.worker!.proc.pid!],
    temporal: () => (stack.temporal?.proc.pid ? [stack.temporal.proc.pid] : []),
    postgres: () => postgresPids([stack.databaseName]),
  });

  const deposit = async () => {
    const q = await quote(customer, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '10.00' });
    return expectStatus(
      await customer.http.post('/api/operations/deposit', {
        accountId,
        quoteId: q.id,
        fundingInstruction: { rail: 'PIX_KEY' },
      }),
      201,
      'deposit',
    );
  };

  /** Deliveries of these operations' OPERATION_REQUESTED: (commit ms, first arrival ms) once all arrived. */
  async function deliveriesOf(operationIds: string[]): Promise<Array<{ committed: number; arrived: number }>> {
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
    for (;;) {
      const rows = await pg.query(
        `select l.message_id, e.created_at from execution_logs l join events e on e.id = l.event_id where ` +
          `e.resource_id = any($1::uuid[])`,
        [operationIds],
      );
      const pairs = rows.rows
        .filter((r) => receiver.firstSeen.has(r.message_id))
        .map((r) => ({ committed: new Date(r.created_at).getTime(), arrived: receiver.firstSeen.get(r.message_id)! }));
      if (pairs.length === operationIds.length) return pairs;
      if (Date.now() > deadline)
        throw new Error(
          `${pairs.length} of ${operationIds.length} deliveries arrived within ${DELIVERY_TIMEOUT_MS} ms`,
        );
      await sleep(100);
    }
  }

  let saturatedIds: string[] = [];

  /**
   * The delivery machinery alone: every delivery of the saturated phase redelivered through the API (20
   * clients), each a delivery workflow with one attempt and no operation behind it. From the first request to
   * the last redelivery received.
   */
  async function redeliveries(): Promise<DeliveryPhase> {
    stack.assertAlive();
    await waitForQuiet();
    const rows = await pg.query(
      `select l.id, l.message_id from execution_logs l join events e on e.id = l.event_id where ` +
        `e.resource_id = any($1::uuid[])`,
      [saturatedIds],
    );
    const logs = rows.rows as Array<{ id: string; message_id: string }>;
    meter.start();
    const t0 = Date.now();
    const result = await closedLoop({
      concurrency: CONCURRENCY,
      total: logs.length,
      task: async (i) =>
        void expectStatus(
          await customer.http.post(`/api/subscriptions/${sub.id}/executionLogs/${logs[i].id}/redeliver`, {}),
          202,
          'redeliver',
        ),
    });
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
    const second = () =>
      logs.map((l) => receiver.arrivals.get(l.message_id)?.[1]).filter((x): x is number => x !== undefined);
    while (second().length < logs.length && Date.now() < deadline) await sleep(50);
    const cpu = meter.stop();
    const done = second();
    return {
      name: `${logs.length} redeliveries, ${CONCURRENCY} clients (delivery workflows only)`,
      deliveries: done.length,
      perSecond: (1000 * done.length) / (Math.max(...done) - t0),
      latency: stats([]),
      errors: result.errors,
      cpu,
    };
  }

  async function saturated(): Promise<DeliveryPhase> {
    stack.assertAlive();
    await waitForQuiet();
    const ids: string[] = [];
    meter.start();
    const result = await closedLoop({
      concurrency: CONCURRENCY,
      total: OPS,
      task: async () => void ids.push((await deposit()).id),
    });
    const pairs = await deliveriesOf(ids);
    const cpu = meter.stop();
    saturatedIds = ids;
    const first = Math.min(...pairs.map((p) => p.committed));
    const last = Math.max(...pairs.map((p) => p.arrived));
    return {
      name: `${OPS} deposits, ${CONCURRENCY} clients (saturated)`,
      deliveries: pairs.length,
      perSecond: (1000 * pairs.length) / (last - first),
      latency: stats(pairs.map((p) => p.arrived - p.committed)),
      errors: result.errors,
      cpu,
    };
  }

  async function paced(rate: number): Promise<DeliveryPhase> {
    stack.assertAlive();
    await waitForQuiet();
    const ids: string[] = [];
    let errors = 0;
    meter.start();
    const t0 = now();
    await Promise.all(
      Array.from({ length: PACED_OPS }, async (_, i) => {
        await sleep(Math.max(0, t0 + (i * 1000) / rate - now()));
        await deposit().then(
          (d) => ids.push(d.id),
          () => errors++,
        );
      }),
    );
    const pairs = await deliveriesOf(ids);
    const cpu = meter.stop();
    const first = Math.min(...pairs.map((p) => p.committed));
    const last = Math.max(...pairs.map((p) => p.arrived));
    return {
      name: `${PACED_OPS} deposits at ${fmt(rate)}/s (below saturation)`,
      deliveries: pairs.length,
      perSecond: (1000 * pairs.length) / (last - first),
      latency: stats(pairs.map((p) => p.arrived - p.committed)),
      errors,
      cpu,
    };
  }

  async function ceiling(): Promise<{ perSecond: number; cpu: CpuReport }> {
    stack.assertAlive();
    await waitForQuiet();
    ceilingDone.length = 0;
    meter.start();
    const t0 = now();
    await closedLoop({
      concurrency: CONCURRENCY,
      total: OPS,
      task: async () => void (await ceilingWorker.start(temporal)),
    });
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
    while (ceilingDone.length < OPS && Date.now() < deadline) await sleep(20);
    const cpu = meter.stop();
    return { perSecond: (1000 * ceilingDone.length) / (Math.max(...ceilingDone) - t0), cpu };
  }

  // Warm-up: JIT, pools and the workflow cache of both workers.
  await closedLoop({ concurrency: CONCURRENCY, total: 40, task: async () => void (await deposit()) });
  await closedLoop({
    concurrency: CONCURRENCY,
    total: 40,
    task: async () => void (await ceilingWorker.start(temporal)),
  });
  await sleep(2000);

  const ceiling1 = await ceiling();
  log(`ceiling: ${fmt(ceiling1.perSecond)} workflows/s`);
  const load = await saturated();
  log(
    `${load.name}: ${fmt(load.perSecond)} deliveries/s, latency p50 ${fmt(load.latency.p50)} ms ` +
      `p99 ${fmt(load.latency.p99)} ms`,
  );
  const slow = await paced(PACED_RATE_SETTING ?? Math.min(10, Math.max(0.5, 0.4 * load.perSecond)));
  log(`${slow.name}: latency p50 ${fmt(slow.latency.p50)} ms p99 ${fmt(slow.latency.p99)} ms`);
  const redelivered = await redeliveries();
  log(`${redelivered.name}: ${fmt(redelivered.perSecond)} deliveries/s`);
  const ceiling2 = await ceiling();
  log(`ceiling again: ${fmt(ceiling2.perSecond)} workflows/s`);
  stack.assertAlive();

  const workerRss = rssOf(stack.worker!.proc.pid);
  const apiRss = rssOf(stack.api!.proc.pid);
  const logs = await pg.query(`select status, count(*)::int as n from execution_logs group by status order by status`);
  const outbox = await pg.query(`select count(*)::int as n from workflow_starts`);
  await pg.end();
  await ceilingWorker.stop();
  await connection.close();
  customer.http.close();
  await receiver.close();

  banner(`bench:webhooks — ${CONCURRENCY} clients; one subscription, one local receiver`);
  console.log(
    table(
      ['phase', 'deliveries', 'deliveries/s', 'latency p50', 'latency p99', 'latency max', 'errors'],
      [load, slow, redelivered].map((p) => [
        p.name,
        String(p.deliveries),
        p.perSecond,
        p.latency.p50,
        p.latency.p99,
        p.latency.max,
        String(p.errors),
      ]),
    ),
  );
  console.log('(latency: event committed → first attempt received, ms)');
  const ceilingRate = (ceiling1.perSecond + ceiling2.perSecond) / 2;
  const ratio = load.perSecond / ceilingRate;
  console.log('');
  console.log(
    table(
      ['target', 'measured', 'goal', ''],
      [
        [
          'deliveries/s vs bare workflow + no-op activity (mean of both runs)',
          `${fmt(ratio, 2)}x (${fmt(load.perSecond)} / ${fmt(ceilingRate)}; ` +
            `runs ${fmt(ceiling1.perSecond)}, ${fmt(ceiling2.perSecond)})`,
          '>= 0.70x',
          ok(ratio >= 0.7),
        ],
        [
          '(redeliveries alone vs the same ceiling: the delivery workflow without an operation behind it)',
          `${fmt(redelivered.perSecond / ceilingRate, 2)}x (${fmt(redelivered.perSecond)} / ${fmt(ceilingRate)})`,
          '',
          '',
        ],
        [
          'first-attempt latency p50, below saturation',
          `${fmt(slow.latency.p50)} ms`,
          '< 500 ms',
          ok(slow.latency.p50 < 500),
        ],
        [
          'first-attempt latency p99, below saturation',
          `${fmt(slow.latency.p99)} ms`,
          '< 2000 ms',
          ok(slow.latency.p99 < 2000),
        ],
        [
          'worker RSS after the run',
          `${fmt(workerRss?.rssMb ?? NaN)} MB`,
          '< 400 MB',
          ok((workerRss?.rssMb ?? Infinity) < 400),
        ],
      ],
    ),
  );
  console.log('');
  console.log(
    table(['process', 'RSS MB (VmRSS)', 'peak MB (VmHWM)'], [rssLine('api', apiRss), rssLine('worker', workerRss)]),
  );
  console.log(
    `\nexecution logs: ${logs.rows.map((r) => `${r.status} ${r.n}`).join(', ')}; outbox rows left: ${outbox.rows[0].n}`,
  );
  for (const [name, cpu] of [
    ['ceiling', ceiling1.cpu],
    [load.name, load.cpu],
    [slow.name, slow.cpu],
    [redelivered.name, redelivered.cpu],
  ] as const) {
    console.log(`\n${name}:`);
    console.log(cpuTable(cpu));
  }
}

void withStack(
  { database: 'cambio_bench_webhooks', worker: true, api: true, env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } },
  main,
);
