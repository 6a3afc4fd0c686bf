// Cambio's own entry points as real child processes (API, worker) on the run's database and Temporal server, for
// crash, chaos and shutdown tests. Each runs as `node --import tsx <entry>`: one process, so a signal sent to it
// reaches the application itself; and in its own process group, so a SIGKILL takes anything it started with it.
import { ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { eventually, simulatorEnv, stack, workflowBundleEnv } from './stack';
import { entryArgs } from './entries';

const { freePort } = require('../../scripts/lib/temporal-binary') as { freePort: () => Promise<number> };
const { WORKER_NODE_ARGS, API_NODE_ARGS } = require('../../scripts/lib/node-args') as {
  WORKER_NODE_ARGS: string[];
  API_NODE_ARGS: string[];
};
export { freePort };

// Below Linux's ephemeral range (32768 to 60999 by default), where every outgoing connection takes its local port.
const LATER_PORTS = { from: 20000, to: 32000 };

/**
 * A port free on 127.0.0.1 now, for a listener that opens later (a spawned API, a proxy that opens when its test
 * says). Not from the ephemeral range, as `freePort`'s are: there, an outgoing connection of any process (the shards'
 * hundreds to Postgres and Temporal) could take it meanwhile, and the later listen failed with EADDRINUSE.
 */
export async function portForLater(): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const port = LATER_PORTS.from + Math.floor(Math.random() * (LATER_PORTS.to - LATER_PORTS.from));
    if (await isPortFree(port)) return port;
  }
  return freePort();
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const ROOT = path.resolve(__dirname, '../..');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Proc {
  name: string;
  child: ChildProcess;
  /** The last 8 kB of its stdout and stderr, for failure messages. */
  output(): string;
  /** All of its stdout and stderr (up to FULL_OUTPUT_BYTES, the newest kept), printed when a test fails. */
  fullOutput(): string;
  alive(): boolean;
  exited: Promise<Exit>;
}

export interface ApiProc extends Proc {
  url: string;
}

const procs: Proc[] = [];

// A flake's cause is often an error logged long before the assertion that fails, so a process keeps all it printed
// (at LOG_LEVEL warn, a few kB per test); the bound only guards against a process that loops on a log line.
const FULL_OUTPUT_BYTES = 4 * 1024 * 1024;

/** Prints the whole output of every process these helpers started and have not killed yet (after a failed test). */
export function printProcessOutputs(testTitle: string): void {
  for (const proc of procs) {
    const state = proc.alive() ? 'running' : `exited ${proc.child.exitCode ?? proc.child.signalCode}`;
    const heading = `${proc.name} (pid ${proc.child.pid}, ${state}), whole output for the failed test "${testTitle}"`;
    process.stderr.write(`\n----- ${heading} -----\n${proc.fullOutput()}\n----- end of ${proc.name} -----\n`);
  }
}

/** The application role's DATABASE_URL when the run has one (`npm test` does). */
const appLogin = (): Record<string, string> =>
  process.env.CAMBIO_TEST_APP_DATABASE_URL ? { DATABASE_URL: process.env.CAMBIO_TEST_APP_DATABASE_URL } : {};

/**
 * `node <entry>` (entries.ts: dist/ under npm test, else tsx) with the test run's environment plus `env`; killAll()
 * ends it if the test does not.
 */
export function spawnEntry(
  name: string,
  entry: string,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Proc {
  const child = spawn(process.execPath, [...nodeArgs, ...entryArgs(entry)], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    // As the application role (scripts/test.js), as a deployment runs them; `env` may name another DATABASE_URL.
    env: {
      ...process.env,
      ...appLogin(),
      LOG_LEVEL: 'warn',
      SANDBOX: 'true',
      ...simulatorEnv(),
      ...workflowBundleEnv(),
      ...env,
    },
  });
  let out = '';
  const keep = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    if (out.length > FULL_OUTPUT_BYTES) out = out.slice(-FULL_OUTPUT_BYTES);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const proc: Proc = {
    name,
    child,
    output: () => out.slice(-8000),
    fullOutput: () => out,
    alive: () => child.exitCode === null && child.signalCode === null,
    exited,
  };
  procs.push(proc);
  return proc;
}

function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(0));
  });
}

/** An API process on a free loopback port; resolves once /readyz answers 200 (or what `ready` accepts). */
export async function spawnApi(
  name: string,
  taskQueue: string,
  env: Record<string, string> = {},
  ready: (status: number) => boolean = (s) => s === 200,
): Promise<ApiProc> {
  const port = await portForLater();
  await stack(); // its simulated PSP is the one the process pays out through
  const queues = queuesOf(taskQueue);
  // With the API's production flags (scripts/lib/node-args.js).
  const proc = spawnEntry(
    name,
    'api/main.ts',
    { ...queues, PORT: String(port), HOST: '127.0.0.1', ...env },
    API_NODE_ARGS,
  );
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (!proc.alive()) throw new Error(`${name} exited early: ${proc.output()}`);
      return status(`${url}/readyz`);
    },
    ready,
    90000,
    200,
  );
  return Object.assign(proc, { url });
}

/** The webhook task queue of processes spawned for `taskQueue` (unless their env names another). */
export const webhookQueueOf = (taskQueue: string) => `${taskQueue}-webhooks`;

const queuesOf = (taskQueue: string) => ({
  TEMPORAL_TASK_QUEUE: taskQueue,
  TEMPORAL_WEBHOOK_TASK_QUEUE: webhookQueueOf(taskQueue),
  TEMPORAL_RAILS_TASK_QUEUE: `${taskQueue}-rails`,
});

/**
 * For a worker a test kills: its workflows' next tasks wait 2 s, not Temporal's 10, for it on its sticky queue before
 * a restarted worker gets them from the task queue. Only the wait after the crash is shorter (decision 0324).
 */
export const KILLED_WORKER_ENV = { WORKER_STICKY_TIMEOUT_SECONDS: '2' };

/**
 * A worker process on `taskQueue` and its webhook queue (webhookQueueOf); resolves once Temporal sees `pollers`
 * distinct pollers on the main queue (this one included; 0: at once, without waiting).
 */
export async function spawnWorker(
  name: string,
  taskQueue: string,
  { pollers = 1, env = {} }: { pollers?: number; env?: Record<string, string> } = {},
): Promise<Proc> {
  // With the worker's production flags (scripts/lib/node-args.js).
  await stack();
  const queues = queuesOf(taskQueue);
  const proc = spawnEntry(name, 'worker/main.ts', { ...queues, ...env }, WORKER_NODE_ARGS);
  if (pollers > 0)
    await waitForPollers(taskQueue, pollers, () =>
      proc.alive() ? undefined : `${name} exited early: ${proc.output()}`,
    );
  return proc;
}

/** Until Temporal sees `n` distinct pollers on the task queue; fails at once when `abort` gives a reason. */
export async function waitForPollers(
  taskQueue: string,
  n: number,
  abort: () => string | undefined = () => undefined,
): Promise<void> {
  const { services, config } = await stack();
  await eventually(
    async () => {
      const reason = abort();
      if (reason) throw new Error(reason);
      const res = await services.temporal.workflowService.describeTaskQueue({
        namespace: config.temporalNamespace,
        taskQueue: { name: taskQueue },
      });
      return new Set((res.pollers ?? []).map((p) => p.identity)).size;
    },
    (count) => count >= n,
    90000,
    250,
  );
}

/** SIGKILL to the whole process group, ignoring one that is gone already. */
function killGroup(proc: Proc): void {
  try {
    process.kill(-proc.child.pid!, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/** SIGKILL to the whole process group; resolves once the process has exited. */
export async function kill(proc: Proc): Promise<void> {
  if (!proc.alive()) return;
  killGroup(proc);
  await proc.exited;
}

/**
 * Waits for a process that is expected to end by itself (a crash point, a signal it was sent); fails after `ms`
 * with its output. Whatever is left of its process group is killed after it.
 */
export async function exitWithin(proc: Proc, ms = 10000): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${proc.name} did not exit within ${ms} ms; output:\n${proc.output()}`)),
      ms,
    );
  });
  try {
    return await Promise.race([proc.exited, timeout]);
  } finally {
    clearTimeout(timer);
    if (!proc.alive()) killGroup(proc);
  }
}

/** Kills every process these helpers started (an `after` hook of each file that uses them). */
export async function killAll(): Promise<void> {
  await Promise.all(procs.splice(0).map(kill));
}
