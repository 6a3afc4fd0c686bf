// Cambio's own entry points as real child processes (API, worker), for tests of signals and process lifecycles.
import { ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

export interface Proc {
  child: ChildProcess;
  /** The last 8 kB of stdout and stderr, for failure messages. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running(): boolean;
}

/** `node --import tsx <entry>` in one process (signals reach the application itself), output captured. */
export function spawnEntry(entry: string, env: Record<string, string | undefined>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    }),
  );
  return { child, output: () => out, exited, running: () => !done };
}

/** Kills what is still running (SIGKILL) and waits for it. */
export async function killAll(procs: Proc[]): Promise<void> {
  await Promise.all(
    procs.map(async (p) => {
      if (!p.running()) return;
      p.child.kill('SIGKILL');
      await p.exited;
    }),
  );
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves with the exit, or fails after `ms` with the process output. */
export async function exitWithin(p: Proc, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`process did not exit within ${ms} ms; output:\n${p.output()}`)), ms);
  });
  try {
    return await Promise.race([p.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
