// `npm start` as a user runs it (scripts/start.js, its own process, the test run's Postgres and Temporal, a free
// port): it builds, migrates, starts worker and API, restarts the API after it is killed, and Ctrl-C (SIGINT)
// stops everything with exit code 0.
import { expect } from 'chai';
import { ChildProcess, execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, stack } from '../helpers/stack';
import { freePort } from '../helpers/processes';

const ROOT = path.resolve(__dirname, '../..');

/** Direct children of `pid` whose command line contains `needle` (Linux /proc). */
function childrenOf(pid: number, needle: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (ppid === pid && cmd.includes(needle)) found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

describe('npm start (scripts/start.js)', function () {
  this.timeout(300000);
  let start: ChildProcess | undefined;
  let output = '';
  // The simulated PSP's state file of this run's database: gone with the database.
  let stateFile: string | undefined;

  after(async () => {
    if (start && start.exitCode === null && start.signalCode === null) {
      for (const pid of [...childrenOf(start.pid!, 'dist/'), start.pid!]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    if (stateFile) fs.rmSync(path.join(ROOT, stateFile), { force: true });
  });

  it('restarts a killed API with back-off, stays up, and stops everything cleanly on Ctrl-C', async function () {
    if (!fs.existsSync('/proc/self/stat')) this.skip();
    const { config } = await stack();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    start = spawn(process.execPath, ['scripts/start.js'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        TEMPORAL_TASK_QUEUE: `cambio-start-${process.pid}`,
        TEMPORAL_WEBHOOK_TASK_QUEUE: `cambio-start-webhooks-${process.pid}`,
        LOG_LEVEL: 'warn',
        START_READY_TIMEOUT_MS: '180000',
        // Unset, as a newcomer has it: `npm start` asks for sandbox mode itself.
        SANDBOX: undefined,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-20000);
    };
    start.stdout!.on('data', keep);
    start.stderr!.on('data', keep);
    const exited = new Promise<{ code: number | null; signal: string | null }>((r) =>
      start!.once('exit', (code, signal) => r({ code, signal })),
    );
    const alive = () => {
      if (start!.exitCode !== null) throw new Error(`npm start exited (${start!.exitCode}):\n${output}`);
    };

    await eventually(async () => (alive(), output.includes('Cambio is ready.')), Boolean, 240000, 500);
    expect(output).to.include(`API            ${base}`);
    expect(output).to.include(`Temporal       ${config.temporalAddress}`);
    const ready = (await (await fetch(`${base}/readyz`)).json()) as { sandbox: boolean };
    expect(ready.sandbox, 'npm start runs in sandbox mode').to.equal(true);
    // The simulated PSP keeps one state per database it serves (decision 0111), not one file shared by them all.
    const db = new URL(config.databaseUrl);
    stateFile = `.cambio/psp-simulator/${db.hostname}-${db.port || '5432'}-${db.pathname.slice(1)}.json`;
    expect(output).to.include(`(state: ${stateFile})`);
    expect(output).to.include('`cambio payment return` sends a PIX payment back through the PSP when the CLI has');
    // The command it prints to create a customer works as printed, from a shell that set nothing (no SANDBOX).
    const printed = /Create a customer[^\n]*\n\s+(.+)\n/.exec(output)?.[1] ?? '';
    expect(printed).to.include('npx cambio customer create --name Acme --json');
    const shell = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !['SANDBOX', 'AUDIT_KEY', 'DATABASE_URL'].includes(k)),
    );
    const created = execSync(printed, { cwd: ROOT, env: shell, encoding: 'utf8' });
    expect(JSON.parse(created)).to.have.property('clientSecret').that.is.a('string');

    const [api] = childrenOf(start.pid!, 'dist/api/main.js');
    expect(api, 'the API runs compiled JavaScript').to.be.a('number');
    process.kill(api, 'SIGKILL');
    await eventually(
      async () => (alive(), output),
      (o) =>
        /\[start\] api exited unexpectedly \(signal SIGKILL\) after [\d.]+ s; restarting it in 1 s \(restart 1\)/.test(
          o,
        ),
      20000,
      100,
    );
    await eventually(
      async () => (
        alive(),
        fetch(`${base}/readyz`).then(
          (r) => r.status,
          () => 0,
        )
      ),
      (s) => s === 200,
      120000,
      250,
    );
    const [restarted] = childrenOf(start.pid!, 'dist/api/main.js');
    expect(restarted).to.be.a('number').and.not.equal(api);
    const workers = childrenOf(start.pid!, 'dist/worker/main.js');
    expect(workers, 'the worker kept running').to.have.length(1);

    start.kill('SIGINT');
    const exit = await Promise.race([
      exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit within 60 s:\n${output}`)), 60000)),
    ]);
    expect(exit, output).to.deep.equal({ code: 0, signal: null });
    expect(output).to.include('[start] stopped');
    const isAlive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect([restarted, ...workers].filter(isAlive), 'API and worker stopped with it').to.deep.equal([]);
    await eventually(
      () =>
        fetch(`${base}/healthz`).then(
          () => 'open',
          () => 'closed',
        ),
      (s) => s === 'closed',
      5000,
      100,
    );
  });

  it('with SANDBOX off and an unsafe secret, stops after the build naming each, starting nothing', async () => {
    const port = await freePort();
    const refused = spawn(process.execPath, ['scripts/start.js'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        SANDBOX: 'false',
        JWT_PRIVATE_KEY: '',
        WEBHOOK_SECRET_KEY: 'cambio-dev-webhook-secret-key',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    refused.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    refused.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const exit = await new Promise<number | null>((resolve) => refused.once('exit', (code) => resolve(code)));
    expect(exit, out).to.equal(1);
    expect(out).to.include(
      'With SANDBOX off the API and the worker do not start while a secret is unset or public: JWT_PRIVATE_KEY ' +
        '(unset), WEBHOOK_SECRET_KEY (a value published in Cambio).',
    );
    expect(out).to.not.match(/Applying database migrations|Starting Temporal|\[api\]|\[worker\]/);
  });
});
