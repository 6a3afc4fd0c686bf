// npm run bench:webhook-neighbours — do one customer's slow or hanging webhook receivers slow another customer's
// deliveries? (decisions 0057, 0363). A dedicated database (cambio_bench_webhook_neighbours, dropped afterwards), the
// API and the worker with their production settings. A quiet customer, subscribed to its operations'
// OPERATION_COMPLETED at a receiver that answers at once, makes BENCH_QUIET_OPS (40) transfers at BENCH_QUIET_RATE
// (2) a second; its first attempts are timed from the event's commit (events.created_at, stamped at COMMIT) to their
// arrival. Phases:
// - alone: the quiet customer's ceiling, in the same run;
// - beside a flooder whose receivers answer at once, then answer after 5 s, then never answer (accept and hold):
//   the flooder makes BENCH_FLOOD_RATE (4) transfers a second, each delivered to three URLs of its receiver, from
//   3 s before the quiet customer starts until it is done. Between phases the flooder's subscriptions are deleted and
//   new ones made on the next receiver; the healthy phase's deliveries are all made before the next phase begins.
// The phases with receivers that hold requests come last, in that order: what their held deliveries leave behind
// (waits for a turn, ended once they wake to a deleted subscription) weighs only on phases as bad or worse.
// Printed: the quiet customer's first-attempt p50, p90, p99 and max, and its p50 over alone; the flooder's
// deliveries answered per second; each phase's CPU per process.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Client as PgClient } from 'pg';
import { activeAccount, eventually, fund, newCustomer, type BenchCustomer } from './lib/cambio';
import { expectStatus } from './lib/http';
import { now, paced, sleep, stats, type Stats } from './lib/load';
import { listenLocally, type LocalServer } from './lib/local-server';
import { type CpuReport, waitForQuiet } from './lib/proc';
import { banner, cpuTable, fmt, table } from './lib/report';
import { log, type Stack, stackCpuMeter, withStack } from './lib/stack';

// The per-customer limits as deployed: what the flooder is held to is part of the measure.
process.env.BENCH_RATE_LIMIT ??= 'default';

const QUIET_OPS = Number(process.env.BENCH_QUIET_OPS || 40);
const QUIET_RATE = Number(process.env.BENCH_QUIET_RATE || 2);
const FLOOD_RATE = Number(process.env.BENCH_FLOOD_RATE || 4);
const FLOOD_URLS = 3;
const FLOOD_LEAD_MS = 3000;
const ARRIVAL_TIMEOUT_MS = 120_000;

type Mode = 'prompt' | 'slow' | 'hang';
const SLOW_MS = 5000;

/**
 * One receiver for both customers, by path: `/quiet` answers at once and notes each message's first arrival;
 * `/prompt/*` answers at once, `/slow/*` after SLOW_MS, `/hang/*` never (the sender gives up at its timeout).
 */
async function startReceivers(): Promise<
  LocalServer & {
    firstSeen: Map<string, number>;
    answered: Record<Mode, number>;
  }
> {
  const firstSeen = new Map<string, number>();
  const answered: Record<Mode, number> = { prompt: 0, slow: 0, hang: 0 };
  const server = http.createServer((req, res) => {
    const at = Date.now();
    req.resume();
    const path = req.url ?? '';
    if (path === '/quiet') {
      const id = String(req.headers['webhook-id']);
      if (!firstSeen.has(id)) firstSeen.set(id, at);
      res.writeHead(200).end();
      return;
    }
    const mode = path.split('/')[1] as Mode;
    if (mode === 'hang') return;
    const answer = () => {
      answered[mode]++;
      res.writeHead(200).end();
    };
    if (mode === 'slow') {
      const timer = setTimeout(answer, SLOW_MS);
      res.on('close', () => clearTimeout(timer));
    } else answer();
  });
  return { ...(await listenLocally(server)), firstSeen, answered };
}

interface Party {
  c: BenchCustomer;
  from: string;
  to: string;
}

async function party(stack: Stack, name: string): Promise<Party> {
  const c = await newCustomer(stack.databaseUrl, stack.apiUrl, name, 32);
  const [from, to] = [await activeAccount(c, ['BRL']), await activeAccount(c, ['BRL'])];
  await fund(c, from, 'BRL', '100000.00');
  return { c, from, to };
}

const transfer = async (p: Party): Promise<string> =>
  expectStatus(
    await p.c.http.post('/api/operations/transfer', {
      sourceAccountId: p.from,
      targetAccountId: p.to,
      amount: { value: '1.00', asset: 'BRL' },
    }),
    201,
    'transfer',
  ).id;

async function subscribe(p: Party, url: string): Promise<string> {
  const resources = [{ name: 'OPERATION', events: ['OPERATION_COMPLETED'] }];
  return expectStatus(await p.c.http.post('/api/subscriptions', { url, resources }), 201, 'subscription').id;
}

async function unsubscribe(p: Party, ids: string[]): Promise<void> {
  for (const id of ids) {
    const key = { 'x-idempotency-key': randomUUID() };
    expectStatus(await p.c.http.request('DELETE', `/api/subscriptions/${id}`, undefined, key), 204, 'delete');
  }
}

interface Phase {
  name: string;
  firstAttempts: Stats;
  floodAnswered: number;
  cpu: CpuReport;
}

async function main(stack: Stack) {
  const receivers = await startReceivers();
  const pg = new PgClient({ connectionString: stack.databaseUrl });
  await pg.connect();
  pg.on('error', () => undefined); // the stack drops the database under it after a failed run
  const quiet = await party(stack, 'Quiet Bench Ltda');
  const flooder = await party(stack, 'Flooding Bench SA');
  await subscribe(quiet, receivers.url('/quiet'));
  const meter = stackCpuMeter(stack);

  /** The quiet customer's transfers' first attempts: event committed to first arrival, ms. */
  async function firstAttempts(operationIds: string[]): Promise<number[]> {
    const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
    // Each transfer's event is written when it settles: a moment after its POST.
    const settled = () =>
      pg
        .query<{ message_id: string; created_at: Date }>(
          `select l.message_id, e.created_at from execution_logs l join events e on e.id = l.event_id
           where e.resource_id = any($1::uuid[]) and e.type = 'OPERATION_COMPLETED'`,
          [operationIds],
        )
        .then((r) => r.rows);
    const rows = await eventually(settled, (r) => r.length === operationIds.length, ARRIVAL_TIMEOUT_MS, 50);
    const notArrived = async () => rows.filter((r) => !receivers.firstSeen.has(r.message_id)).length;
    await eventually(notArrived, (n) => n === 0, deadline - Date.now(), 50);
    return rows.map((r) => receivers.firstSeen.get(r.message_id)! - new Date(r.created_at).getTime());
  }

  /** Until none of the flooder's deliveries is PENDING (run after the healthy phase only, the first flood). */
  async function floodDelivered(): Promise<void> {
    const pending = () =>
      pg
        .query<{ n: number }>(
          `select count(*)::int as n from execution_logs where customer_id = $1 and status = 'PENDING'`,
          [flooder.c.customerId],
        )
        .then((r) => r.rows[0].n);
    await eventually(pending, (n) => n === 0, ARRIVAL_TIMEOUT_MS, 200);
  }

  async function phase(mode: Mode | undefined): Promise<Phase> {
    stack.assertAlive();
    await waitForQuiet();
    const subscriptions: string[] = [];
    for (let i = 1; mode && i <= FLOOD_URLS; i++)
      subscriptions.push(await subscribe(flooder, receivers.url(`/${mode}/${i}`)));
    let flooding = Boolean(mode);
    const flood = (async () => {
      const t0 = now();
      for (let i = 0; flooding; i++) {
        await sleep(Math.max(0, t0 + (i * 1000) / FLOOD_RATE - now()));
        void transfer(flooder).catch((err) => log(`flooder: ${(err as Error).message}`));
      }
    })();
    if (mode) await sleep(FLOOD_LEAD_MS);
    const answeredBefore = mode ? receivers.answered[mode] : 0;
    meter.start();
    const t0 = now();
    const ids = await paced(QUIET_OPS, QUIET_RATE, () => transfer(quiet));
    const latencies = await firstAttempts(ids);
    const seconds = (now() - t0) / 1000;
    const cpu = meter.stop();
    flooding = false;
    await flood;
    const floodAnswered = mode ? (receivers.answered[mode] - answeredBefore) / seconds : 0;
    // The healthy flood's deliveries trail it under load: made before the next phase, not during it.
    if (mode === 'prompt') await floodDelivered();
    await unsubscribe(flooder, subscriptions);
    const name = mode ? `beside a flooder whose receivers ${DESCRIBED[mode]}` : 'alone';
    return { name, firstAttempts: stats(latencies), floodAnswered, cpu };
  }

  // Warm-up: JIT, pools and the workflow caches.
  await paced(20, 10, () => transfer(quiet));
  await sleep(2000);

  const phases: Phase[] = [];
  for (const mode of [undefined, 'prompt', 'slow', 'hang'] as const) {
    const p = await phase(mode);
    log(`${p.name}: first attempts p50 ${fmt(p.firstAttempts.p50)} ms, p99 ${fmt(p.firstAttempts.p99)} ms`);
    phases.push(p);
  }
  await pg.end();
  quiet.c.http.close();
  flooder.c.http.close();
  await receivers.close();

  const alone = phases[0].firstAttempts.p50;
  banner(
    `bench:webhook-neighbours — the quiet customer's ${QUIET_OPS} transfers at ${QUIET_RATE}/s; the flooder's ` +
      `at ${FLOOD_RATE}/s to ${FLOOD_URLS} URLs`,
  );
  console.log(
    table(
      ['phase', 'first attempt p50', 'p90', 'p99', 'max', 'p50 / alone', "flooder's answered/s"],
      phases.map((p) => [
        p.name,
        p.firstAttempts.p50,
        p.firstAttempts.p90,
        p.firstAttempts.p99,
        p.firstAttempts.max,
        `${fmt(p.firstAttempts.p50 / alone, 2)}x`,
        p.floodAnswered,
      ]),
    ),
  );
  console.log('(first attempt: the event committed → the attempt received, ms)');
  for (const p of phases) {
    console.log(`\n${p.name}:`);
    console.log(cpuTable(p.cpu));
  }
}

const DESCRIBED: Record<Mode, string> = {
  prompt: 'answer at once',
  slow: `answer after ${SLOW_MS / 1000} s`,
  hang: 'never answer',
};

void withStack(
  {
    database: 'cambio_bench_webhook_neighbours',
    worker: true,
    api: true,
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
  },
  main,
);
