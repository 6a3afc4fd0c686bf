// A worker process started during an outage (decision 0105) waits in place, and polls its task queues as soon as
// the dependency answers: the same process, never restarted, with no supervisor back-off to wait out. Each
// dependency sits behind a TCP proxy that opens later.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import supertest from 'supertest';
import { activeAccount } from '../helpers/fixtures';
import { fund, untilStatus } from '../helpers/money';
import { freePort, killAll, spawnApi, spawnWorker, waitForPollers } from '../helpers/processes';
import type { Proc } from '../helpers/processes';
import { TcpProxy } from '../helpers/tcp-proxy';
import { eventually, idem, newCustomer, stack } from '../helpers/stack';

/** The worker says what it waits for, and is still the process that was started, a few passes later. */
async function expectWaiting(worker: Proc, missing: string): Promise<void> {
  await eventually(
    async () => worker.fullOutput(),
    (out) => out.split(`${missing} cannot be reached`).length > 2,
    20000,
    200,
  );
  expect(worker.alive(), worker.output()).to.equal(true);
}

describe('a worker started during an outage', function () {
  this.timeout(120000);
  after(killAll);

  it('Temporal down: waits, then polls once Temporal answers and settles a transfer', async () => {
    const { config } = await stack();
    const [host, port] = config.temporalAddress.split(':');
    const temporal = new TcpProxy(await freePort(), { host, port: Number(port) });
    const queue = `outage-worker-${randomUUID()}`;
    const worker = await spawnWorker('worker-without-temporal', queue, {
      pollers: 0,
      env: { TEMPORAL_ADDRESS: `127.0.0.1:${temporal.port}` },
    });
    try {
      await expectWaiting(worker, 'Temporal');
      await temporal.open();
      await waitForPollers(queue, 1, () => (worker.alive() ? undefined : `worker exited: ${worker.output()}`));

      // An API on the worker's queue: the transfer it accepts is started and settled by this worker.
      const api = await spawnApi('api-for-outage-worker', queue);
      const c = await newCustomer('Worker Started Without Temporal');
      const [from, to] = [await activeAccount(c, ['BRL']), await activeAccount(c, ['BRL'])];
      await fund(c, from.id, 'BRL', '100.00');
      const body = { sourceAccountId: from.id, targetAccountId: to.id, amount: { value: '40.00', asset: 'BRL' } };
      const transfer = await supertest(api.url).post('/api/operations/transfer').set(c.auth).set(idem()).send(body);
      expect(transfer.status, JSON.stringify(transfer.body)).to.equal(201);
      await untilStatus(c, transfer.body.id, 'COMPLETED');
      expect(worker.alive(), 'the same process, never restarted').to.equal(true);
    } finally {
      await temporal.cut();
    }
  });

  it('Postgres down: waits, then polls once Postgres answers', async () => {
    const { config } = await stack();
    const postgres = new TcpProxy(await freePort());
    // The application role, as every spawned process of the run (scripts/test.js), through the proxy.
    const dbUrl = new URL(process.env.CAMBIO_TEST_APP_DATABASE_URL ?? config.databaseUrl);
    dbUrl.host = `127.0.0.1:${postgres.port}`;
    const queue = `outage-worker-${randomUUID()}`;
    const worker = await spawnWorker('worker-without-postgres', queue, {
      pollers: 0,
      env: { DATABASE_URL: dbUrl.toString() },
    });
    try {
      await expectWaiting(worker, 'Postgres');
      await postgres.open();
      await waitForPollers(queue, 1, () => (worker.alive() ? undefined : `worker exited: ${worker.output()}`));
      expect(worker.alive(), 'the same process, never restarted').to.equal(true);
    } finally {
      await postgres.cut();
    }
  });
});
