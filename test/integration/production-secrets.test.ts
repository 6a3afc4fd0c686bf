// Outside sandbox mode the API and the worker refuse to start while a secret is unset or holds a value Cambio
// publishes (../shared/spec/decisions.md, "A claim is not money"; docs/decisions/0114): they exit non-zero with one
// message naming every such variable. With the run's own secrets (test/helpers/secrets.ts) the same processes
// start, and a transfer settles through them.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { transferSettlesThrough } from '../helpers/outages';
import { killAll, spawnApi, spawnEntry, spawnWorker, type Proc } from '../helpers/processes';
import { simulatorEnv, stack } from '../helpers/stack';

const { WORKER_NODE_ARGS, API_NODE_ARGS } = require('../../scripts/lib/node-args') as {
  WORKER_NODE_ARGS: string[];
  API_NODE_ARGS: string[];
};

/** What a deployment gets by copying the defaults: every secret unset, empty or one the code and docs print. */
const DEFAULTS = {
  SANDBOX: 'false',
  PIX_WEBHOOK_TOKEN: 'cambio-dev-pix-webhook-token',
  JWT_PRIVATE_KEY: '',
  JWT_PUBLIC_KEY: '',
  WEBHOOK_SECRET_KEY: 'cambio-dev-webhook-secret-key',
  AUDIT_KEY: 'cambio sandbox audit key: public, proves nothing',
  CURSOR_SECRET: '',
  PIX_CLIENT_SECRET: 'cambio-dev-pix-secret',
};
const NAMED = [
  'PIX_WEBHOOK_TOKEN (a value published in Cambio)',
  'JWT_PRIVATE_KEY (unset)',
  'JWT_PUBLIC_KEY (unset)',
  'WEBHOOK_SECRET_KEY (a value published in Cambio)',
  'AUDIT_KEY (a value published in Cambio)',
  'CURSOR_SECRET (unset)',
  'PIX_CLIENT_SECRET (a value published in Cambio)',
];

async function refused(proc: Proc, what: string) {
  const exit = await Promise.race([
    proc.exited,
    new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 30000)),
  ]);
  expect(exit, `${what} still running after 30 s: ${proc.output()}`).to.not.equal('running');
  expect(exit).to.deep.include({ code: 1 });
  const out = proc.output();
  expect(out).to.include(`The ${what} does not start outside sandbox mode while a secret is unset or public`);
  for (const named of NAMED) expect(out, named).to.include(named);
  // Refused before it opened anything: it never said it listens or reached for Postgres or Temporal.
  expect(out).to.not.match(/listening|cannot be reached/);
}

describe('secrets outside sandbox mode', function () {
  this.timeout(120000);
  after(killAll);

  before(async () => {
    await stack(); // its simulated PSP: PIX_PSP_URL is set, so PIX_CLIENT_SECRET is required too
    expect(simulatorEnv().PIX_PSP_URL).to.be.a('string');
  });

  it('the API with the defaults exits 1 naming every unsafe secret at once', async () => {
    const api = spawnEntry('api-with-defaults', 'api/main.ts', { ...DEFAULTS, PORT: '0' }, API_NODE_ARGS);
    await refused(api, 'API');
  });

  it('the worker with the defaults exits 1 naming every unsafe secret at once', async () => {
    const queue = `secrets-${randomUUID()}`;
    const worker = spawnEntry(
      'worker-with-defaults',
      'worker/main.ts',
      { ...DEFAULTS, TEMPORAL_TASK_QUEUE: queue },
      WORKER_NODE_ARGS,
    );
    await refused(worker, 'worker');
  });

  it('a PSP client secret is not required while no PSP is configured', async () => {
    const { PIX_CLIENT_SECRET: _ignored, ...others } = DEFAULTS;
    const api = spawnEntry('api-without-psp', 'api/main.ts', { ...others, PIX_PSP_URL: '', PORT: '0' }, API_NODE_ARGS);
    expect(await api.exited).to.deep.include({ code: 1 });
    expect(api.output()).to.include('CURSOR_SECRET (unset)');
    expect(api.output()).to.not.include('PIX_CLIENT_SECRET');
  });

  it("with the deployment's own secrets the API and the worker start and settle a transfer", async () => {
    const queue = `secrets-${randomUUID()}`;
    const worker = await spawnWorker('worker-with-secrets', queue, { env: { SANDBOX: 'false' } });
    const api = await spawnApi('api-with-secrets', queue, { SANDBOX: 'false' });
    const ready = await fetch(`${api.url}/readyz`);
    expect(((await ready.json()) as { sandbox: boolean }).sandbox).to.equal(false);
    await transferSettlesThrough(api.url, 'Production Secrets');
    expect(worker.alive(), worker.output()).to.equal(true);
    expect(api.alive(), api.output()).to.equal(true);
  });
});
