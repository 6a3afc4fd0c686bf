// npm run bench:webhooks — webhook delivery against the real stack (API and worker as child processes, one
// Temporal dev server, Postgres), measured on deliveries alone. One subscription to OPERATION_REQUESTED points at a
// receiver in this process.
// - Deliveries alone: with the subscription paused, BENCH_OPS deposits (20 clients) record their events, each
//   logged FAILED SUBSCRIPTION_DISABLED with no attempt; resumed, one recover queues them all. Deliveries/s from
//   the recover request to the last delivery received: delivery workflows and their attempts, nothing else.
// - The ceiling, run before and after: a bare workflow whose one ordinary activity POSTs a body of the same size to
//   the same receiver (bench/ceiling-workflow.ts), BENCH_OPS started by 20 clients, on a worker inside this
//   process; completions/s from the first start to the last POST received.
// - First-attempt latency below saturation: BENCH_PACED_OPS deposits paced at BENCH_PACED_RATE with the
//   subscription active; event commit (events.created_at, stamped at COMMIT by the database, decision 0238) to
//   the receiver's arrival time.
// Targets: deliveries/s >= 0.85x ceiling; first-attempt latency p50 < 200 ms below saturation; worker RSS < 400 MB.
// Knobs: BENCH_CONCURRENCY (20), BENCH_OPS (500), BENCH_PACED_OPS (100), BENCH_PACED_RATE (per second; default
// 40% of the delivery rate, at most 10).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Client as PgClient } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { activeAccount, newCustomer, quote } from './lib/cambio';
import { expectStatus } from './lib/http';
import { closedLoop, paced, sleep, stats } from './lib/load';
import { listenLocally } from './lib/local-server';
import { CpuReport, rssOf, waitForQuiet } from './lib/proc';
import { log, Stack, stackCpuMeter, withStack } from './lib/stack';
import { startCeilingWorker } from './lib/ceiling';
import { banner, cpuTable, fmt, ok, rssLine, table } from './lib/report';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 20);
const OPS = Number(process.env.BENCH_OPS || 500);
const PACED_OPS = Number(process.env.BENCH_PACED_OPS || 100);
// Below saturation means below what this machine delivers: unless set, 40% of the delivery phase's rate (at most
// 10/s), so a busy shared machine still measures latency rather than queueing.
const PACED_RATE_SETTING = process.env.BENCH_PACED_RATE ? Number(process.env.BENCH_PACED_RATE) : undefined;
const DELIVERY_TIMEOUT_MS = 120000;

/**
 * The receiver: answers 200 at once and notes when each message id arrived (epoch ms), first and every time; a POST
 * without a message id is the ceiling's, noted apart.
 */
async function startReceiver(): Promise<{
  url: string;
  firstSeen: Map<string, number>;
  arrivals: Map<string, number[]>;
  ceilingArrivals: number[];
  close(): Promise<void>;
}> {
  const firstSeen = new Map<string, number>();
  const arrivals = new Map<string, number[]>();
  const ceilingArrivals: number[] = [];
  const server = http.createServer((req, res) => {
    const at = Date.now();
    if (req.headers['webhook-id'] === undefined) {
      ceilingArrivals.push(at);
      req.resume();
      req.on('end', () => res.writeHead(200).end());
      return;
    }
    const id = String(req.headers['webhook-id']);
    if (!firstSeen.has(id)) firstSeen.set(id, at);
    arrivals.set(id, [...(arrivals.get(id) ?? []), at]);
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  server.keepAliveTimeout = 5000;
  const local = await listenLocally(server);
  return { url: local.url('/hooks'), firstSeen, arrivals, ceilingArrivals, close: local.close };
}

interface DeliveryPhase {
  name: string;
  deliveries: number;
  perSecond: number;
  latency: ReturnType<typeof stats>;
  errors: number;
  cpu: CpuReport;
}

// What a delivery carries, in size: the ceiling's activity POSTs a body like it.
const SAMPLE_BODY = JSON.stringify({ id: randomUUID(), type: 'OPERATION_REQUESTED', padding: 'x'.repeat(900) });

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
  const setStatus = async (status: 'ACTIVE' | 'DISABLED') =>
    expectStatus(
      await customer.http.request(
        'PATCH',
        `/api/subscriptions/${sub.id}`,
        { status },
        {
          'x-idempotency-key': randomUUID(),
        },
      ),
      200,
      `subscription ${status}`,
    );

  const ceilingWorker = await startCeilingWorker(stack, () => undefined, { url: receiver.url, body: SAMPLE_BODY });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const temporal = new Client({ connection, namespace: stack.namespace });
  const pg = new PgClient({ connectionString: stack.databaseUrl });
  await pg.connect();

  const meter = stackCpuMeter(stack);

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

  /** The message ids and commit times of these operations' OPERATION_REQUESTED deliveries. */
  async function messagesOf(operationIds: string[]): Promise<Array<{ messageId: string; committed: number }>> {
    const rows = await pg.query(
      `select l.message_id, e.created_at from execution_logs l join events e on e.id = l.event_id where ` +
        `e.resource_id = any($1::uuid[])`,
      [operationIds],
    );
    return rows.rows.map((r) => ({ messageId: r.message_id, committed: new Date(r.created_at).getTime() }));
  }

  /** Until every message has arrived at the receiver; its first arrival each. */
  async function arrivalsOf(messageIds: string[]): Promise<number[]> {
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
    for (;;) {
      const arrived = messageIds.map((id) => receiver.firstSeen.get(id)).filter((x): x is number => x !== undefined);
      if (arrived.length === messageIds.length) return arrived;
      if (Date.now() > deadline)
        throw new Error(
          `${arrived.length} of ${messageIds.length} deliveries arrived within ${DELIVERY_TIMEOUT_MS} ms`,
        );
      await sleep(50);
    }
  }

  /** Deliveries alone: events recorded while paused, then one recover queues a delivery workflow for each. */
  async function deliveriesAlone(): Promise<DeliveryPhase> {
    stack.assertAlive();
    const since = new Date(Date.now() - 1000).toISOString();
    await setStatus('DISABLED');
    const ids: string[] = [];
    const created = await closedLoop({
      concurrency: CONCURRENCY,
      total: OPS,
      task: async () => void ids.push((await deposit()).id),
    });
    const messages = await messagesOf(ids);
    if (messages.length !== ids.length) throw new Error(`${messages.length} deliveries logged for ${ids.length}`);
    await setStatus('ACTIVE');
    await waitForQuiet();
    meter.start();
    const t0 = Date.now();
    const recovered = expectStatus(
      await customer.http.post(`/api/subscriptions/${sub.id}/recover`, { since }),
      202,
      'recover',
    );
    if (recovered.count !== ids.length) throw new Error(`recover queued ${recovered.count} of ${ids.length}`);
    const arrived = await arrivalsOf(messages.map((m) => m.messageId));
    const cpu = meter.stop();
    return {
      name: `${OPS} deliveries recovered at once (events recorded before)`,
      deliveries: arrived.length,
      perSecond: (1000 * arrived.length) / (Math.max(...arrived) - t0),
      latency: stats(arrived.map((a) => a - t0)),
      errors: created.errors,
      cpu,
    };
  }

  async function pacedPhase(rate: number): Promise<DeliveryPhase> {
    stack.assertAlive();
    await waitForQuiet();
    const ids: string[] = [];
    let errors = 0;
    meter.start();
    await paced(PACED_OPS, rate, () =>
      deposit().then(
        (d) => ids.push(d.id),
        () => errors++,
      ),
    );
    const messages = await messagesOf(ids);
    const arrived = await arrivalsOf(messages.map((m) => m.messageId));
    const cpu = meter.stop();
    const latency = messages.map((m, i) => arrived[i] - m.committed);
    return {
      name: `${PACED_OPS} deposits at ${fmt(rate)}/s (below saturation)`,
      deliveries: arrived.length,
      perSecond: (1000 * arrived.length) / (Math.max(...arrived) - Math.min(...messages.map((m) => m.committed))),
      latency: stats(latency),
      errors,
      cpu,
    };
  }

  async function ceiling(): Promise<{ perSecond: number; cpu: CpuReport }> {
    stack.assertAlive();
    await waitForQuiet();
    receiver.ceilingArrivals.length = 0;
    meter.start();
    const t0 = Date.now();
    await closedLoop({
      concurrency: CONCURRENCY,
      total: OPS,
      task: async () => void (await ceilingWorker.start(temporal)),
    });
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
    while (receiver.ceilingArrivals.length < OPS && Date.now() < deadline) await sleep(20);
    const cpu = meter.stop();
    const done = receiver.ceilingArrivals;
    return { perSecond: (1000 * done.length) / (Math.max(...done) - t0), cpu };
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
  const load = await deliveriesAlone();
  log(`${load.name}: ${fmt(load.perSecond)} deliveries/s`);
  const slow = await pacedPhase(PACED_RATE_SETTING ?? Math.min(10, Math.max(0.5, 0.4 * load.perSecond)));
  log(`${slow.name}: latency p50 ${fmt(slow.latency.p50)} ms p99 ${fmt(slow.latency.p99)} ms`);
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
      [load, slow].map((p) => [
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
  console.log('(latency: recovered: recover request → arrival; paced: event committed → first attempt received, ms)');
  const ceilingRate = (ceiling1.perSecond + ceiling2.perSecond) / 2;
  const ratio = load.perSecond / ceilingRate;
  console.log('');
  console.log(
    table(
      ['target', 'measured', 'goal', ''],
      [
        [
          'deliveries/s vs bare workflow + one POST activity (mean of both runs)',
          `${fmt(ratio, 2)}x (${fmt(load.perSecond)} / ${fmt(ceilingRate)}; ` +
            `runs ${fmt(ceiling1.perSecond)}, ${fmt(ceiling2.perSecond)})`,
          '>= 0.85x',
          ok(ratio >= 0.85),
        ],
        [
          'first-attempt latency p50, below saturation',
          `${fmt(slow.latency.p50)} ms`,
          '< 200 ms',
          ok(slow.latency.p50 < 200),
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
  ] as const) {
    console.log(`\n${name}:`);
    console.log(cpuTable(cpu));
  }
}

void withStack(
  { database: 'cambio_bench_webhooks', worker: true, api: true, env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } },
  main,
);
