// An API process started during an outage (decision 0103) answers as an API whose dependency went down under it,
// and serves without a restart once the dependency answers. Temporal down: /readyz 503 naming Temporal, operations
// accepted into the outbox (the stack's worker, which reaches Temporal, starts and settles them). Postgres down: 503
// with Retry-After on every request, liveness 200, and the same on a Postgres that accepts connections and stalls
// them. Each dependency sits behind a TCP proxy that opens later (or resumes).
import { expect } from 'chai';
import supertest from 'supertest';
import { postgresDown, temporalDown, transferSettlesThrough } from '../helpers/outages';
import { killAll, spawnApi } from '../helpers/processes';
import { eventually, idem, newCustomer, stack } from '../helpers/stack';

/** Once the dependency answers: the same process reports ready within a minute (gRPC's and our own back-offs). */
const untilReady = (url: string) =>
  eventually(
    () => supertest(url).get('/readyz'),
    (r) => r.status === 200,
    60000,
    500,
  );

/** An API on the stack's queues, with one dependency's address in `env` behind a closed proxy: it starts (503). */
async function apiStartedWithout(name: string, env: Record<string, string>) {
  const { config } = await stack();
  const queues = {
    TEMPORAL_WEBHOOK_TASK_QUEUE: config.webhookTaskQueue,
    TEMPORAL_RAILS_TASK_QUEUE: config.railsTaskQueue,
  };
  return spawnApi(name, config.taskQueue, { ...env, ...queues }, (status) => status === 503);
}

describe('an API started during an outage', function () {
  this.timeout(120000);
  after(killAll);

  it('Temporal down: starts, accepts a transfer that settles, and is ready once Temporal answers', async () => {
    // Nothing listens on the proxy's port until it opens: Temporal is down for this API alone.
    const { proxy: temporal, address } = await temporalDown();
    const api = await apiStartedWithout('api-without-temporal', { TEMPORAL_ADDRESS: address });
    try {
      // Past its start (a 503 too, until Postgres answers): the API's own readiness, naming what is missing.
      const readiness = await eventually(
        () => supertest(api.url).get('/readyz'),
        (r) => r.body.checks?.postgres === 'ok',
      );
      expect(readiness.status).to.equal(503);
      expect(readiness.body.checks).to.deep.equal({ postgres: 'ok', temporal: 'unavailable' });

      await transferSettlesThrough(api.url, 'Started Without Temporal');

      await temporal.open();
      await untilReady(api.url);
      expect(api.alive(), 'the same process, never restarted').to.equal(true);
    } finally {
      await temporal.cut();
    }
  });

  it('Postgres down: answers 503 with Retry-After, then serves once Postgres answers, without a restart', async () => {
    const { proxy: postgres, databaseUrl } = await postgresDown();
    const api = await apiStartedWithout('api-without-postgres', { DATABASE_URL: databaseUrl });
    try {
      const c = await newCustomer('Started Without Postgres');
      expect((await supertest(api.url).get('/healthz')).status).to.equal(200);
      const refused = await supertest(api.url).get('/api/accounts').set(c.auth);
      expect(refused.status).to.equal(503);
      expect(refused.body.code).to.equal('SERVICE_UNAVAILABLE');
      expect(refused.headers['retry-after']).to.equal('2');
      const post = await supertest(api.url).post('/api/quotes').set(c.auth).set(idem()).send({ accountId: 'x' });
      expect(post.status).to.equal(503);
      expect(post.body.code).to.equal('SERVICE_UNAVAILABLE');

      await postgres.open();
      await untilReady(api.url);
      const served = await supertest(api.url).get('/api/accounts').set(c.auth);
      expect(served.status, JSON.stringify(served.body)).to.equal(200);
      expect(api.alive(), 'the same process, never restarted').to.equal(true);
    } finally {
      await postgres.cut();
    }
  });

  it('Postgres stalled: answers 503 with Retry-After at once, then serves once Postgres answers', async () => {
    // Connections open and carry nothing, as to a frozen host: the start must not wait on them for ever.
    const { proxy: postgres, databaseUrl } = await postgresDown();
    await postgres.open();
    postgres.stall();
    try {
      const api = await apiStartedWithout('api-postgres-stalled', { DATABASE_URL: databaseUrl });
      const c = await newCustomer('Started On A Stalled Postgres');
      expect((await supertest(api.url).get('/healthz').timeout(1_000)).status).to.equal(200);
      const started = Date.now();
      const refused = await supertest(api.url).get('/api/accounts').set(c.auth).timeout(10_000);
      expect(Date.now() - started).to.be.below(2_000);
      expect(refused.status).to.equal(503);
      expect(refused.headers['retry-after']).to.equal('2');

      postgres.resume();
      await untilReady(api.url);
      const served = await supertest(api.url).get('/api/accounts').set(c.auth);
      expect(served.status, JSON.stringify(served.body)).to.equal(200);
      expect(api.alive(), 'the same process, never restarted').to.equal(true);
    } finally {
      postgres.resume();
      await postgres.cut();
    }
  });
});
