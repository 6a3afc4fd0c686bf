// A worker process started during an outage (decision 0105) waits in place, and polls its task queues as soon as
// the dependency answers: the same process, never restarted, with no supervisor back-off to wait out. Each
// dependency sits behind a TCP proxy that opens later (or, for a Postgres that stalls, resumes).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { postgresDown, temporalDown, transferSettlesThrough } from '../helpers/outages';
import { killAll, spawnApi, spawnWorker, waitForPollers } from '../helpers/processes';
import type { TcpProxy } from '../helpers/tcp-proxy';
import { eventually } from '../helpers/stack';

/**
 * A worker on a queue of its own, started with `env` (one dependency behind `proxy`, closed or stalled): it says what
 * it waits for and stays alive; once the proxy opens (`answer`), the same process polls its queue.
 */
async function waitsThenPolls(
  missing: 'Temporal' | 'Postgres',
  proxy: TcpProxy,
  env: Record<string, string>,
  answer = () => proxy.open(),
) {
  const queue = `outage-worker-${randomUUID()}`;
  const worker = await spawnWorker(`worker-without-${missing}`, queue, { pollers: 0, env });
  await eventually(
    async () => worker.fullOutput(),
    (out) => out.split(`${missing} cannot be reached`).length > 2,
    20000,
    200,
  );
  expect(worker.alive(), worker.output()).to.equal(true);
  await answer();
  await waitForPollers(queue, 1, () => (worker.alive() ? undefined : `worker exited: ${worker.output()}`));
  expect(worker.alive(), 'the same process, never restarted').to.equal(true);
  return { queue, worker };
}

describe('a worker started during an outage', function () {
  this.timeout(120000);
  after(killAll);

  it('Temporal down: waits, then polls once Temporal answers and settles a transfer', async () => {
    const { proxy, address } = await temporalDown();
    try {
      const { queue, worker } = await waitsThenPolls('Temporal', proxy, { TEMPORAL_ADDRESS: address });
      // An API on the worker's queue: the transfer it accepts is started and settled by this worker.
      const api = await spawnApi('api-for-outage-worker', queue);
      await transferSettlesThrough(api.url, 'Worker Started Without Temporal');
      expect(worker.alive()).to.equal(true);
    } finally {
      await proxy.cut();
    }
  });

  it('Postgres down: waits, then polls once Postgres answers', async () => {
    const { proxy, databaseUrl } = await postgresDown();
    try {
      await waitsThenPolls('Postgres', proxy, { DATABASE_URL: databaseUrl });
    } finally {
      await proxy.cut();
    }
  });

  it('Postgres stalled (connections open, nothing answers): waits, then polls once Postgres answers', async () => {
    const { proxy, databaseUrl } = await postgresDown();
    await proxy.open();
    proxy.stall();
    try {
      await waitsThenPolls('Postgres', proxy, { DATABASE_URL: databaseUrl }, async () => proxy.resume());
    } finally {
      proxy.resume();
      await proxy.cut();
    }
  });
});
