// Real API and worker processes for crash tests: `tsx api/main.ts` / `tsx worker/main.ts` on the run's database
// and Temporal server, each in its own process group (tsx runs the program in a grandchild, which must die too).
import { ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { eventually } from './stack';

/* eslint-disable @typescript-eslint/no-var-requires */
const { freePort } = require('../../scripts/lib/temporal-binary') as { freePort: () => Promise<number> };

const ROOT = path.resolve(__dirname, '../..');

export interface Proc {
  name: string;
  child: ChildProcess;
  /** The last 4 kB of its output, for failure messages. */
  output(): string;
  alive(): boolean;
}

export interface ApiProc extends Proc {
  url: string;
}

const procs: Proc[] = [];

function spawnTsx(name: string, entry: string, env: Record<string, string>): Proc {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), [entry], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
  });
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const proc: Proc = { name, child, output: () => out, alive: () => child.exitCode === null && child.signalCode === null };
  procs.push(proc);
  return proc;
}

const baseEnv = (taskQueue: string) => ({
  DATABASE_URL: process.env.DATABASE_URL!,
  TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
  TEMPORAL_TASK_QUEUE: taskQueue,
  SANDBOX: 'true',
});

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

/** An API process on a free port; resolves once /readyz answers 200. */
export async function spawnApi(name: string, taskQueue: string, env: Record<string, string> = {}): Promise<ApiProc> {
  const port = await freePort();
  const proc = spawnTsx(name, 'api/main.ts', { ...baseEnv(taskQueue), PORT: String(port), HOST: '127.0.0.1', ...env });
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (!proc.alive()) throw new Error(`${name} exited early: ${proc.output()}`);
      return status(`${url}/readyz`);
    },
    (s) => s === 200,
    90000,
    200,
  );
  return { ...proc, url };
}

/** A worker process; resolves once Temporal sees `pollers` distinct pollers on the task queue (this one included). */
export async function spawnWorker(name: string, taskQueue: string, temporal: Client, namespace: string, pollers: number): Promise<Proc> {
  const proc = spawnTsx(name, 'worker/main.ts', baseEnv(taskQueue));
  await waitForPollers(temporal, namespace, taskQueue, pollers, () => (proc.alive() ? undefined : `${name} exited early: ${proc.output()}`));
  return proc;
}

export async function waitForPollers(temporal: Client, namespace: string, taskQueue: string, n: number, abort: () => string | undefined = () => undefined) {
  await eventually(
    async () => {
      const reason = abort();
      if (reason) throw new Error(reason);
      const res = await temporal.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue } });
      return new Set((res.pollers ?? []).map((p) => p.identity)).size;
    },
    (count) => count >= n,
    90000,
    250,
  );
}

/** SIGKILL to the whole process group; resolves once the direct child has exited. */
export async function kill(proc: Proc): Promise<void> {
  const { child } = proc;
  if (!proc.alive()) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
  await exited;
}

/** Waits for a process that is expected to die by itself (a crash point); its group is killed after it. */
export async function exitOf(proc: Proc, timeoutMs = 10000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { child } = proc;
  if (proc.alive()) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${proc.name} did not exit within ${timeoutMs} ms: ${proc.output()}`)), timeoutMs);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // the group is gone already
  }
  return { code: child.exitCode, signal: child.signalCode };
}

/** Kills every process these helpers started (an `after` hook of each file that uses them). */
export async function killAll(): Promise<void> {
  await Promise.all(procs.splice(0).map(kill));
}
