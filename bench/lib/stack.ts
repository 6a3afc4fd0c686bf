// Starts the real stack for a bench, the way `npm start` does, but on its own database and ports:
//   build (scripts/build.js: TypeScript → dist/) → Postgres check (scripts/lib/postgres.js) → a fresh database →
//   migrations (`node dist/db/migrate.js`) → Temporal (TEMPORAL_ADDRESS, else an in-memory dev server on a free
//   port via scripts/lib/temporal-server.js) → worker (`node dist/worker/main.js`) and API
//   (`node dist/api/main.js`) as child processes → /readyz 200 and a worker polling. Compiled JavaScript, as in
//   production: tsx at run time would add its own CPU. stop() undoes all of it (and drops the database unless
//   BENCH_KEEP_DB=1).
// With `psp: true`, the simulated PSP too (`node dist/psp-simulator/main.js`, as `npm start` runs it in sandbox), on
// a free port with a state file of its own: the worker and the API get its URL as PIX_PSP_URL (and PUBLIC_BASE_URL,
// the API's address, so its notices reach the API), so every PIX deposit of the run is charged, paid and noticed
// through it and every PIX withdrawal pays out through it. The stack is up once the worker registered its notice
// URL there (a deposit paid before would wait for the registration's retry).
// The worker uses task queues of its own (cambio-bench-<pid>, -webhooks and -rails), so a Cambio worker already
// polling the same external Temporal server can never pick up the bench's workflows or provider calls.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { CpuMeter, postgresPids, type PidSource } from './proc';
import { API_BASE } from '../../psp-simulator/api-pix/layout';

const {
  ensurePostgres,
  createDatabase,
  dropDatabase,
  sessionsOn,
  withDatabase,
  redact,
} = require('../../scripts/lib/postgres');
const { freePort, ROOT } = require('../../scripts/lib/temporal-binary');
const { temporalForRun, waitForWorker, ACTIVITY_POLLERS } = require('../../scripts/lib/temporal-server');
const { spawnChild, describeExit } = require('../../scripts/lib/children');
const { WORKER_NODE_ARGS, API_NODE_ARGS } = require('../../scripts/lib/node-args');
const { build } = require('../../scripts/build');

export const REPO_ROOT: string = ROOT;
const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/cambio';

export interface Child {
  name: string;
  proc: { pid?: number; kill(signal?: string): boolean };
  exited: Promise<{ code: number | null; signal: string | null }>;
  running(): boolean;
  stop(timeoutMs?: number): Promise<unknown>;
}

export interface StackOptions {
  /** Database name, e.g. cambio_bench_api; dropped and created fresh. */
  database: string;
  worker: boolean;
  api: boolean;
  /** Extra environment for the worker and the API. */
  env?: Record<string, string>;
  /** Start the simulated PSP and name it PIX_PSP_URL of the worker and the API. */
  psp?: boolean;
  /**
   * With `psp`: quotes price from live rates, the simulated PSP's three sources (RATES_SOURCES=oxr,ptax,ecb), as
   * `npm start` runs them, instead of the sandbox table.
   */
  liveRates?: boolean;
}

export interface Stack {
  databaseUrl: string;
  databaseName: string;
  temporalAddress: string;
  /** The dev server's Prometheus metrics, with BENCH_TEMPORAL_METRICS=1 (bench/lib/temporal-metrics.ts). */
  temporalMetricsUrl?: string;
  namespace: string;
  taskQueue: string;
  apiUrl: string;
  /** The simulated PSP's base URL (its control routes are under /sim), with `psp: true`. */
  pspUrl?: string;
  api?: Child;
  worker?: Child;
  temporal?: Child;
  psp?: Child;
  /** Throws when a child we started died on its own (a bench calls it between phases). */
  assertAlive(): void;
  /** Spawns `node dist/<entry>.js` (entry named by its source, e.g. `api/main.ts`); stopped with the stack. */
  spawnNode(name: string, entry: string, env: Record<string, string>): Child;
  stop(): Promise<void>;
}

export const log = (msg: string) => console.log(`[bench] ${msg}`);

function getStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(0));
  });
}

export async function waitFor200(url: string, timeoutMs: number, abort: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = abort();
    if (reason) throw new Error(`gave up waiting for ${url}: ${reason}`);
    if ((await getStatus(url)) === 200) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** Until the simulated PSP holds a notice URL (the worker registers it at start, worker/rail-notices.ts). */
async function waitForNoticeUrl(pspUrl: string, timeoutMs: number, abort: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = abort();
    if (reason) throw new Error(`gave up waiting for the PSP notice registration: ${reason}`);
    const res = await fetch(`${pspUrl}/sim/state`).catch(() => undefined);
    const state = res?.ok ? ((await res.json()) as { webhooks?: Record<string, unknown> }) : undefined;
    if (Object.keys(state?.webhooks ?? {}).length) return;
    if (Date.now() > deadline) throw new Error(`no notice URL registered at the PSP within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

let current: Stack | undefined;
let stoppingAll = false;

// A closed pipe (`npm run bench:api | head`) must not kill us before we stop the children and drop the database.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});

// Ctrl-C: stop what we started, then leave.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stoppingAll) process.exit(130);
    stoppingAll = true;
    log(`${signal} received; stopping`);
    void (current ? current.stop() : Promise.resolve()).finally(() => process.exit(130));
  });
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const baseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  await ensurePostgres(baseUrl, { log });
  const databaseUrl: string = withDatabase(baseUrl, opts.database);
  const namespace = process.env.TEMPORAL_NAMESPACE || 'default';
  const taskQueue = `cambio-bench-${process.pid}`;
  const children: Child[] = [];
  let unexpected: string | undefined;
  let stopped = false;
  // Set once this run has made the database: a run refused because another uses it must not drop it on the way out.
  let ownsDatabase = false;
  let pspDir: string | undefined;

  const watch = (child: Child) => {
    void child.exited.then((info) => {
      if (!stopped) {
        unexpected = `${child.name} exited unexpectedly (${describeExit(info)})`;
        log(unexpected);
      }
    });
  };

  const spawnNode = (name: string, entry: string, env: Record<string, string>): Child => {
    const compiled = path.join('dist', entry.replace(/\.ts$/, '.js'));
    if (!fs.existsSync(path.join(REPO_ROOT, compiled))) throw new Error(`${compiled} is missing (did the build run?)`);
    // The worker and the API run with the flags they have in production (scripts/lib/node-args.js).
    const nodeArgs: string[] = name === 'worker' ? [...WORKER_NODE_ARGS] : name === 'api' ? [...API_NODE_ARGS] : [];
    // BENCH_CPU_PROF=1: V8 CPU profiles of each child in bench/.profiles/<name>/ (one file per thread: the main
    // thread's is the large one); summarise with `npx tsx bench/profile-summary.ts <file>` or open in DevTools.
    if (process.env.BENCH_CPU_PROF === '1')
      nodeArgs.push('--cpu-prof', '--cpu-prof-dir', path.join(REPO_ROOT, 'bench', '.profiles', name));
    const child: Child = spawnChild(name, process.execPath, [...nodeArgs, compiled], { cwd: REPO_ROOT, env });
    children.push(child);
    return child;
  };

  const stack: Stack = {
    databaseUrl,
    databaseName: opts.database,
    temporalAddress: '',
    namespace,
    taskQueue,
    apiUrl: '',
    spawnNode,
    assertAlive() {
      if (unexpected) throw new Error(unexpected);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const apps = children.filter((c) => c.running() && c.name !== 'temporal');
      if (apps.length) log(`stopping ${apps.map((c) => c.name).join(', ')}`);
      await Promise.all(apps.map((c) => c.stop(15000)));
      if (stack.temporal && stack.temporal.running()) await stack.temporal.stop(10000);
      if (pspDir) fs.rmSync(pspDir, { recursive: true, force: true });
      if (!ownsDatabase) return;
      if (process.env.BENCH_KEEP_DB === '1') {
        log(`keeping database ${opts.database} (BENCH_KEEP_DB=1)`);
      } else {
        await dropDatabase(databaseUrl).catch((err: Error) => log(`could not drop ${opts.database}: ${err.message}`));
        log(`dropped database ${opts.database}`);
      }
    },
  };
  current = stack;

  try {
    log('building (TypeScript → dist/)');
    if (build() !== 0) throw new Error('the build failed (see the tsc output above)');
    // The drop below ends every session on the database: a run of the same bench still going would lose its stack
    // mid-phase and print figures of nothing. Benches run one at a time anyway (each would measure the other's
    // load), so a second run is refused and the first one goes on.
    const sessions: number = await sessionsOn(databaseUrl);
    if (sessions > 0) {
      throw new Error(
        `${sessions} session(s) use database ${opts.database}: another run of this bench is going. Run benches one ` +
          'at a time, or end that run first.',
      );
    }
    ownsDatabase = true;
    await dropDatabase(databaseUrl);
    await createDatabase(databaseUrl);
    log(`database ${redact(databaseUrl)} (fresh; dropped afterwards)`);
    const migrate = spawnNode('migrate', 'db/migrate.ts', {
      ...(process.env as Record<string, string>),
      DATABASE_URL: databaseUrl,
    });
    const migrated = await migrate.exited;
    if (migrated.code !== 0) throw new Error(`migrations failed (${describeExit(migrated)})`);

    const temporal = await temporalForRun({
      namespace,
      log,
      metricsPort: process.env.BENCH_TEMPORAL_METRICS === '1' ? await freePort() : undefined,
      onChild: (child: Child) => {
        children.push(child);
        stack.temporal = child;
      },
    });
    stack.temporalAddress = temporal.address;
    stack.temporalMetricsUrl = temporal.metricsUrl;
    if (temporal.child) watch(temporal.child);

    // The PSP's OAuth2 client, the same on both sides (the simulator accepts it, the rail presents it).
    const pspClient = { PIX_CLIENT_ID: 'cambio-bench', PIX_CLIENT_SECRET: 'cambio-bench-pix-secret' };
    if (opts.psp) {
      const simPort = await freePort();
      stack.pspUrl = `http://127.0.0.1:${simPort}`;
      pspDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cambio-bench-psp-'));
      stack.psp = spawnNode('psp-simulator', 'psp-simulator/main.ts', {
        ...(process.env as Record<string, string>),
        PSP_SIM_PORT: String(simPort),
        PSP_SIM_STATE_FILE: path.join(pspDir, 'state.json'),
        PSP_SIM_CLIENT_ID: pspClient.PIX_CLIENT_ID,
        PSP_SIM_CLIENT_SECRET: pspClient.PIX_CLIENT_SECRET,
      });
      watch(stack.psp);
      await waitFor200(`${stack.pspUrl}/healthz`, 30000, () => unexpected);
    }
    // Picked once the simulator listens: a port freed and picked again at once can be the simulator's own (the kernel
    // hands a just-released port out again), and the API then failed to start with EADDRINUSE.
    const port = await freePort();
    stack.apiUrl = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: namespace,
      TEMPORAL_TASK_QUEUE: taskQueue,
      TEMPORAL_WEBHOOK_TASK_QUEUE: `${taskQueue}-webhooks`,
      TEMPORAL_RAILS_TASK_QUEUE: `${taskQueue}-rails`,
      PORT: String(port),
      SANDBOX: 'true',
      // Per-request logs are debug-level anyway; warn keeps the bench output to the figures.
      LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
      // One customer drives all the load here; the per-customer limits (250/s and 8 in flight by default) would measure
      // themselves. It still runs on every request, it just never says no. BENCH_RATE_LIMIT=default keeps the real
      // limit.
      ...(process.env.BENCH_RATE_LIMIT === 'default'
        ? {}
        : { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000', RATE_LIMIT_IN_FLIGHT: '1000000' }),
      // The PSP's API is under the simulator's origin, as API Pix lays it out (its token and /sim at the origin).
      ...(stack.pspUrl
        ? { ...pspClient, PIX_PSP_URL: `${stack.pspUrl}${API_BASE}`, PUBLIC_BASE_URL: stack.apiUrl }
        : {}),
      ...(stack.pspUrl && opts.liveRates
        ? {
            RATES_SOURCES: 'oxr,ptax,ecb',
            OXR_URL: stack.pspUrl,
            OXR_APP_ID: 'bench',
            PTAX_URL: stack.pspUrl,
            ECB_URL: `${stack.pspUrl}/stats/eurofxref/eurofxref-daily.xml`,
          }
        : {}),
      ...(opts.env ?? {}),
    };
    if (opts.worker) watch((stack.worker = spawnNode('worker', 'worker/main.ts', env)));
    if (opts.api) watch((stack.api = spawnNode('api', 'api/main.ts', env)));
    const abort = () => unexpected;
    if (opts.api) await waitFor200(`${stack.apiUrl}/readyz`, 120000, abort);
    // The worker serves the three queues (deliveries and provider calls have their own): wait until it polls each
    // (the rails' queue runs activities only).
    if (opts.worker) {
      for (const queue of [taskQueue, `${taskQueue}-webhooks`]) {
        await waitForWorker(stack.temporalAddress, namespace, queue, 120000, abort);
      }
      await waitForWorker(stack.temporalAddress, namespace, `${taskQueue}-rails`, 120000, abort, ACTIVITY_POLLERS);
    }
    if (opts.worker && stack.pspUrl) await waitForNoticeUrl(stack.pspUrl, 60000, abort);
    log(
      `stack up: API ${stack.apiUrl}${opts.worker ? `, worker on task queue ${taskQueue}` : ''}, ` +
        `Temporal ${stack.temporalAddress}${stack.pspUrl ? `, simulated PSP ${stack.pspUrl}` : ''}`,
    );
    return stack;
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

/**
 * A CpuMeter with a group per process the stack started (the API, the worker, Temporal, the simulated PSP) and
 * one for this database's Postgres backends; a bench adds its own processes (a ceiling server) with `extra`.
 */
export function stackCpuMeter(stack: Stack, extra: Record<string, PidSource> = {}): CpuMeter {
  const pidOf = (child: Child | undefined) => () => (child?.proc.pid ? [child.proc.pid] : []);
  return new CpuMeter({
    api: pidOf(stack.api),
    worker: pidOf(stack.worker),
    ...extra,
    temporal: pidOf(stack.temporal),
    ...(stack.psp ? { 'simulated PSP': pidOf(stack.psp) } : {}),
    postgres: () => postgresPids([stack.databaseName]),
  });
}

/** Runs `main(stack)` and always stops the stack; exits 1 on failure. */
export async function withStack(opts: StackOptions, main: (stack: Stack) => Promise<void>): Promise<void> {
  let stack: Stack | undefined;
  let code = 0;
  try {
    stack = await startStack(opts);
    await main(stack);
  } catch (err) {
    code = 1;
    console.error(`[bench] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    if (stack) await stack.stop();
  }
  process.exit(code);
}
