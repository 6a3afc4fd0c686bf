// The README's quickstart, run as written: every ```bash block under "## Quickstart", in order, in one bash
// process (set -e), against an API and a worker started here with the settings the README tells a newcomer to use
// (sandbox on, local webhook URLs allowed). The blocks run in the environment of a newcomer's second terminal: no
// SANDBOX and no AUDIT_KEY (the test run sets both for its own processes), so a CLI command that needs either must
// say so itself. BASE and RECEIVER_PORT (shell variables, not exported) and WEBHOOK_LOG point the blocks at this
// run; the answers are then checked through the API: a token, an ACTIVE account, a quote, a COMPLETED deposit with
// its USD credited, and an OPERATION_COMPLETED delivery the README's receiver verified and logged.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, killAll, spawnApi, spawnWorker } from '../helpers/processes';

const ROOT = path.resolve(__dirname, '../..');

/** The ```bash blocks of the README's "## Quickstart" section, in order. */
export function quickstartBlocks(readme: string): string[] {
  const start = readme.indexOf('\n## Quickstart\n');
  if (start < 0) throw new Error('README.md has no "## Quickstart" section');
  const next = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, next < 0 ? undefined : next);
  return [...section.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  vars: Record<string, string>;
}

/** Set for this test run's own processes, never in a newcomer's terminal. */
const NOT_IN_A_NEWCOMERS_SHELL = ['SANDBOX', 'AUDIT_KEY'];

/** Runs `script` with bash in its own process group; the group (the receiver it starts) is killed at the end. */
function runBash(script: string, env: Record<string, string>, timeoutMs: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const shellEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
    for (const name of NOT_IN_A_NEWCOMERS_SHELL) delete shellEnv[name];
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: shellEnv,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    };
    const timer = setTimeout(() => {
      killGroup();
      reject(new Error(`the quickstart did not finish within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      killGroup();
      const vars: Record<string, string> = {};
      for (const m of stdout.matchAll(/^QUICKSTART (\w+)=(.*)$/gm)) vars[m[1]] = m[2];
      resolve({ code, stdout, stderr, vars });
    });
  });
}

describe('README quickstart', function () {
  this.timeout(240_000);
  after(killAll);

  it('has bash blocks that take a newcomer from credentials to a completed deposit and a received webhook', () => {
    const blocks = quickstartBlocks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    expect(blocks.length, 'bash blocks under ## Quickstart').to.be.greaterThan(3);
    const all = blocks.join('\n');
    for (const step of [
      'cambio -- customer create',
      '/api/oauth/client/token',
      '/api/quotes',
      '/api/operations/deposit',
    ])
      expect(all).to.include(step);
    expect(all).to.include('/inbound-payment');
    expect(all).to.include('/api/subscriptions');
  });

  it('runs as written against an API and a worker, and each answer is what it says', async () => {
    const taskQueue = `quickstart-${randomUUID()}`;
    const env = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX: 'true' };
    const [api] = await Promise.all([
      spawnApi('quickstart-api', taskQueue, env),
      spawnWorker('quickstart-worker', taskQueue, { env }),
    ]);
    const log = path.join(os.tmpdir(), `cambio-quickstart-${randomUUID()}.log`);
    const blocks = quickstartBlocks(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    // What the blocks left in their variables, for the checks below.
    const names = ['CLIENT_ID', 'TOKEN', 'ACCOUNT', 'QUOTE', 'DEPOSIT_ID'];
    const report = names.map((n) => `echo "QUICKSTART ${n}=$${n}"`).join('\n');
    // BASE and RECEIVER_PORT as a newcomer sets them, in the shell (not exported): the blocks carry them on.
    const shellVars = `BASE=${api.url}\nRECEIVER_PORT=${await freePort()}\n`;
    const run = await runBash(
      `${shellVars}${blocks.join('\n')}\n${report}\n`,
      {
        WEBHOOK_LOG: log,
        TEMPORAL_TASK_QUEUE: taskQueue,
        TEMPORAL_WEBHOOK_TASK_QUEUE: `${taskQueue}-webhooks`,
        LOG_LEVEL: 'warn',
      },
      180_000,
    );
    const output = `exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect(run.code, output).to.equal(0);
    const { CLIENT_ID, TOKEN, ACCOUNT, QUOTE, DEPOSIT_ID } = run.vars;

    // Step 1-2: credentials from the CLI, exchanged for a signed token.
    expect(CLIENT_ID, output).to.match(/\S/);
    expect(TOKEN.split('.'), output).to.have.length(3);
    const get = async <T>(p: string): Promise<T> => {
      const res = await fetch(`${api.url}${p}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(res.status, `GET ${p}`).to.equal(200);
      return (await res.json()) as T;
    };
    type Amount = { value: string; asset: string };
    // Step 3: the account is ACTIVE.
    expect((await get<{ currentState: { status: string } }>(`/api/accounts/${ACCOUNT}`)).currentState.status).to.equal(
      'ACTIVE',
    );
    // Step 5-6: the deposit consumed the quote and COMPLETED, crediting the quoted USD.
    const deposit = await get<{
      intent: { type: string };
      quote: { id: string };
      currentState: { status: string };
      sourceAmount: Amount;
      targetAmount: Amount;
    }>(`/api/operations/${DEPOSIT_ID}`);
    expect(deposit.intent.type).to.equal('DEPOSIT');
    expect(deposit.quote.id).to.equal(QUOTE);
    expect(deposit.currentState.status).to.equal('COMPLETED');
    expect(deposit.sourceAmount).to.deep.include({ value: '1000.00', asset: 'BRL' });
    const { balances } = await get<{ balances: Array<{ asset: string; available: Amount }> }>(
      `/api/accounts/${ACCOUNT}/balances`,
    );
    expect(balances.find((b) => b.asset === 'USD')?.available.value).to.equal(deposit.targetAmount.value);
    // The blocks printed the funding instruction, the payment's decision and the USD balance.
    expect(run.stdout).to.match(/txid: 'cb[0-9a-f]{32}'/);
    expect(run.stdout).to.match(/pixCopiaECola: '000201/);
    expect(run.stdout).to.include('MATCHED');
    expect(run.stdout).to.include(deposit.targetAmount.value);
    const payments = await get<{ data: Array<{ status: string }> }>(
      `/api/inbound-payments?filters=operationId[eq]=${DEPOSIT_ID}`,
    );
    expect(payments.data.map((p) => p.status)).to.deep.equal(['MATCHED']);

    // Step 4 and 6: the receiver verified the signature and logged the deliveries' bodies.
    const lines = fs.readFileSync(log, 'utf8').trim().split('\n');
    fs.rmSync(log, { force: true });
    const completed = lines
      .filter((l) => l.startsWith('OPERATION_COMPLETED '))
      .map((l) => JSON.parse(l.slice('OPERATION_COMPLETED '.length)) as { id: string });
    expect(completed.map((b) => b.id)).to.include(DEPOSIT_ID);
    expect(run.stdout).to.match(/^OPERATION_COMPLETED \{/m);
    expect(run.stdout).not.to.include('rejected:');
  });
});
