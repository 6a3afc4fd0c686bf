// Postgres that stops answering without closing its connections (frozen, a paused VM, a stalled network path): a
// request on a pooled connection is 503 with Retry-After within its statement bound, not a hang that the HTTP server
// ends by closing the socket (decision 0228).
import { expect } from 'chai';
import supertest from 'supertest';
import { postgresDown } from '../helpers/outages';
import { killAll, spawnApi } from '../helpers/processes';
import { newCustomer, stack } from '../helpers/stack';

describe('Postgres that stalls under a running API', function () {
  this.timeout(120_000);
  after(killAll);

  it('answers 503 with Retry-After within the statement bound, then serves once Postgres answers', async () => {
    const { config } = await stack();
    const { proxy, databaseUrl } = await postgresDown();
    await proxy.open();
    const api = await spawnApi('api-postgres-stalls', config.taskQueue, {
      DATABASE_URL: databaseUrl,
      DB_STATEMENT_TIMEOUT_MS: '2000',
      TEMPORAL_WEBHOOK_TASK_QUEUE: config.webhookTaskQueue,
      TEMPORAL_RAILS_TASK_QUEUE: config.railsTaskQueue,
    });
    try {
      const c = await newCustomer('Stalled Postgres Ltda');
      const warm = await supertest(api.url).get('/api/accounts').set(c.auth);
      expect(warm.status, JSON.stringify(warm.body)).to.equal(200);

      proxy.stall();
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
      await proxy.cut();
    }
  });
});
