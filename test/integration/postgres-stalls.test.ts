// Postgres that stops answering without closing its connections (frozen, a paused VM, a stalled network path): a
// request on a pooled connection is 503 with Retry-After within its statement bound, not a hang that the HTTP server
// ends by closing the socket (decision 0228).
import { expect } from 'chai';
import net from 'node:net';
import supertest from 'supertest';
import { killAll, freePort, spawnApi } from '../helpers/processes';
import { newCustomer, stack } from '../helpers/stack';

/** A proxy in front of Postgres whose connections stay open but carry nothing while it is stalled. */
class StallingProxy {
  stalled = false;
  private server?: net.Server;
  private readonly held: Array<() => void> = [];
  constructor(readonly port: number) {}

  async open(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(5432, '127.0.0.1');
      const forward = (from: net.Socket, to: net.Socket) =>
        from.on('data', (chunk) => {
          if (this.stalled) this.held.push(() => to.write(chunk));
          else to.write(chunk);
        });
      forward(client, upstream);
      forward(upstream, client);
      for (const s of [client, upstream]) s.on('error', () => undefined);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  resume(): void {
    this.stalled = false;
    for (const write of this.held.splice(0)) write();
  }

  close(): Promise<unknown> {
    return new Promise((r) => this.server?.close(r) ?? r(undefined));
  }
}

describe('Postgres that stalls under a running API', function () {
  this.timeout(120_000);
  after(killAll);

  it('answers 503 with Retry-After within the statement bound, then serves once Postgres answers', async () => {
    const { config } = await stack();
    const proxy = new StallingProxy(await freePort());
    await proxy.open();
    const url = new URL(process.env.CAMBIO_TEST_APP_DATABASE_URL ?? config.databaseUrl);
    url.host = `127.0.0.1:${proxy.port}`;
    const api = await spawnApi('api-postgres-stalls', config.taskQueue, {
      DATABASE_URL: url.toString(),
      DB_STATEMENT_TIMEOUT_MS: '2000',
      TEMPORAL_WEBHOOK_TASK_QUEUE: config.webhookTaskQueue,
      TEMPORAL_RAILS_TASK_QUEUE: config.railsTaskQueue,
    });
    try {
      const c = await newCustomer('Stalled Postgres Ltda');
      const warm = await supertest(api.url).get('/api/accounts').set(c.auth);
      expect(warm.status, JSON.stringify(warm.body)).to.equal(200);

      proxy.stalled = true;
      const started = Date.now();
      const stalled = await supertest(api.url).get('/api/accounts').set(c.auth).timeout(20_000);
      expect(stalled.status, JSON.stringify(stalled.body)).to.equal(503);
      expect(stalled.body.code).to.equal('SERVICE_UNAVAILABLE');
      expect(stalled.headers['retry-after']).to.equal('2');
      expect(Date.now() - started).to.be.below(5_000);

      proxy.resume();
      const served = await supertest(api.url).get('/api/accounts').set(c.auth).timeout(20_000);
      expect(served.status, JSON.stringify(served.body)).to.equal(200);
    } finally {
      proxy.resume();
      await proxy.close();
    }
  });
});
