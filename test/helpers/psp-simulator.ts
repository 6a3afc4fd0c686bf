// The simulated PSP (psp-simulator/) as a real child process on a free loopback port, with its own state file,
// and a client for its /sim control routes.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { API_BASE } from '../../psp-simulator/api-pix/layout';
import { entryArgs } from './entries';

const ROOT = path.resolve(__dirname, '../..');
// The client secret is the run's own: outside sandbox a published PIX_CLIENT_SECRET stops the API and the worker.
export const SIM_CLIENT = { id: 'cambio-test', secret: randomBytes(24).toString('hex') };

export interface SimulatorProc {
  /** Its origin: the token, /healthz and the /sim control routes. */
  url: string;
  /** Its API Pix base, under the origin as the spec's servers are (`/api`): PIX_PSP_URL. */
  apiUrl: string;
  child: ChildProcess;
  stateFile: string;
  /** POST/GET/DELETE on a /sim control route; the parsed JSON answer (or undefined) and the status. */
  control(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

export async function startSimulator(env: Record<string, string> = {}): Promise<SimulatorProc> {
  const dir = mkdtempSync(path.join(tmpdir(), 'psp-sim-'));
  const stateFile = path.join(dir, 'state.json');
  const child = spawn(process.execPath, entryArgs('psp-simulator/main.ts'), {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PSP_SIM_PORT: '0',
      PSP_SIM_STATE_FILE: stateFile,
      PSP_SIM_CLIENT_ID: SIM_CLIENT.id,
      PSP_SIM_CLIENT_SECRET: SIM_CLIENT.secret,
      // The bank beside the PSP (psp-simulator/bank-boleto/) knows the same pair, as BOLETO_CLIENT_ID/SECRET.
      BANK_SIM_CLIENT_ID: SIM_CLIENT.id,
      BANK_SIM_CLIENT_SECRET: SIM_CLIENT.secret,
      PSP_SIM_SETTLE_MS: '50',
      ...env,
    },
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`simulator did not start: ${out}`)), 30000);
    const read = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const found = /listening on (http:\/\/\S+)/.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`simulator exited (${code}): ${out}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    url,
    apiUrl: `${url}${API_BASE}`,
    child,
    stateFile,
    async control(method, route, body) {
      const res = await fetch(`${url}/sim${route}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // Gone already.
        }
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
