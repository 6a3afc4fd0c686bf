// An API process started while Temporal is down (decision 0103) starts and answers as an API whose Temporal went
// down under it: /readyz 503 naming Temporal, operations accepted into the outbox (the stack's worker, which reaches
// Temporal, starts and settles them). Once Temporal answers, it is ready without a restart.
import { expect } from 'chai';
import supertest from 'supertest';
import { activeAccount } from '../helpers/fixtures';
import { fund, untilStatus } from '../helpers/money';
import { freePort, killAll, spawnApi } from '../helpers/processes';
import { TcpProxy } from '../helpers/tcp-proxy';
import { eventually, idem, newCustomer, stack } from '../helpers/stack';

describe('an API started while Temporal is down', function () {
  this.timeout(120000);
  after(killAll);

  it('starts, accepts a transfer that settles, and is ready once Temporal answers, without a restart', async () => {
    const { config } = await stack();
    const [host, port] = config.temporalAddress.split(':');
    // Nothing listens on the proxy's port until it opens: Temporal is down for this API alone.
    const temporal = new TcpProxy(await freePort(), { host, port: Number(port) });
    const api = await spawnApi(
      'api-without-temporal',
      config.taskQueue,
      {
        TEMPORAL_ADDRESS: `127.0.0.1:${temporal.port}`,
        TEMPORAL_WEBHOOK_TASK_QUEUE: config.webhookTaskQueue,
        TEMPORAL_RAILS_TASK_QUEUE: config.railsTaskQueue,
      },
      (status) => status === 503,
    );
    try {
      const readiness = (await (await fetch(`${api.url}/readyz`)).json()) as { checks: object };
      expect(readiness.checks).to.deep.equal({ postgres: 'ok', temporal: 'unavailable' });

      const c = await newCustomer('Started Without Temporal');
      const [from, to] = [await activeAccount(c, ['BRL']), await activeAccount(c, ['BRL'])];
      await fund(c, from.id, 'BRL', '100.00');
      const body = { sourceAccountId: from.id, targetAccountId: to.id, amount: { value: '40.00', asset: 'BRL' } };
      const transfer = await supertest(api.url).post('/api/operations/transfer').set(c.auth).set(idem()).send(body);
      expect(transfer.status, JSON.stringify(transfer.body)).to.equal(201);
      await untilStatus(c, transfer.body.id, 'COMPLETED');

      await temporal.open();
      const ready = await eventually(
        () => fetch(`${api.url}/readyz`).then((r) => r.status),
        (status) => status === 200,
        60000,
        500,
      );
      expect(ready).to.equal(200);
      expect(api.alive(), 'the same process, never restarted').to.equal(true);
    } finally {
      await temporal.cut();
    }
  });
});
