// Cambio scaled out: two API processes over one database. A change made through one process or the CLI (a secret
// rotated, a customer disabled, an account created) is honoured by the other at once, or within the bound the docs
// give (CUSTOMER_CACHE_SECONDS), whatever either process kept in memory (verified secrets and tokens, customer
// standings, copies of list pages).
import { expect } from 'chai';
import supertest from 'supertest';
import { Webhook } from 'standardwebhooks';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { accountBody } from '../helpers/fixtures';
import { cambioWith } from '../helpers/cli';
import { ApiProc, killAll, spawnApi } from '../helpers/processes';
import { Receiver } from '../helpers/receiver';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';

const CACHE_SECONDS = 1;

describe('two API processes over one database', function () {
  this.timeout(120000);
  let a: ApiProc;
  let b: ApiProc;

  before(async () => {
    const { config } = await stack();
    // On the stack's queues: its workers (another process than either API) deliver what either API records.
    const env = {
      CUSTOMER_CACHE_SECONDS: String(CACHE_SECONDS),
      RATE_LIMIT_PER_SECOND: '100000',
      TEMPORAL_WEBHOOK_TASK_QUEUE: config.webhookTaskQueue,
      TEMPORAL_RAILS_TASK_QUEUE: config.railsTaskQueue,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    };
    [a, b] = await Promise.all([spawnApi('api-a', config.taskQueue, env), spawnApi('api-b', config.taskQueue, env)]);
  });

  after(killAll);

  const token = (api: ApiProc, clientId: string, clientSecret: string) =>
    supertest(api.url).post('/api/oauth/client/token').send({ clientId, clientSecret });

  it('refuses a rotated-out secret on both processes at once, though each had just checked it right', async () => {
    const c = await newCustomer('Rotated Secret SA');
    for (const api of [a, b]) expect((await token(api, c.clientId, c.clientSecret)).status).to.equal(200);
    // No grace: the operator's stop for a leaked secret.
    const rotated = JSON.parse(
      (await cambioWith({ CLIENT_SECRET_GRACE_SECONDS: '0' }, 'customer', 'rotate-secret', c.customerId, '--json'))
        .stdout,
    );
    for (const api of [a, b]) {
      const old = await token(api, c.clientId, c.clientSecret);
      expect(old.status, api.name).to.equal(401);
      expect(old.body.code).to.equal('INVALID_CLIENT');
      expect((await token(api, c.clientId, rotated.clientSecret)).status, api.name).to.equal(200);
    }
  });

  it('stops a disabled customer on both within CUSTOMER_CACHE_SECONDS, its token requests at once', async () => {
    const c = await newCustomer('Disabled Elsewhere SA');
    for (const api of [a, b]) expect((await supertest(api.url).get('/api/accounts').set(c.auth)).status).to.equal(200);
    await cambioWith({}, 'customer', 'disable', c.customerId);
    const started = Date.now();
    for (const api of [a, b]) {
      expect((await token(api, c.clientId, c.clientSecret)).status, api.name).to.equal(401);
      await eventually(
        () => supertest(api.url).get('/api/accounts').set(c.auth),
        (r) => r.status === 401,
        10000,
        100,
      );
    }
    // The cache's bound, and 3 s for a busy host (as customer-access.test.ts).
    expect(Date.now() - started).to.be.below(CACHE_SECONDS * 1000 + 3000);
  });

  it('shows an account created through one process on the next list page of the other', async () => {
    const c = await newCustomer('Listed Elsewhere SA');
    const list = (api: ApiProc) => supertest(api.url).get('/api/accounts').query({ limit: 10 }).set(c.auth);
    const first = await supertest(a.url).post('/api/accounts').set(c.auth).set(idem()).send(accountBody());
    expect(first.status).to.equal(201);
    // Twice on B: the second answer is B's copy of the page.
    for (let i = 0; i < 2; i++) expect((await list(b)).body.data).to.have.length(1);
    const second = await supertest(a.url).post('/api/accounts').set(c.auth).set(idem()).send(accountBody());
    expect(second.status).to.equal(201);
    const ids = (await list(b)).body.data.map((x: { id: string }) => x.id);
    expect(ids).to.have.members([first.body.id, second.body.id]);
  });

  describe('webhook subscriptions changed through one process, delivered by a worker', () => {
    const receivers: Receiver[] = [];
    after(() => Promise.all(receivers.map((r) => r.stop())));
    const BENEFICIARY_ONLY = [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }];

    const beneficiary = (api: ApiProc, c: TestCustomer) =>
      supertest(api.url)
        .post('/api/beneficiaries')
        .set(c.auth)
        .set(idem())
        .send(beneficiaryBody(pixInstruction('EMAIL', `p${Date.now()}${Math.random()}@example.com`)));
    const logs = async (api: ApiProc, c: TestCustomer, id: string) =>
      (await supertest(api.url).get(`/api/subscriptions/${id}/executionLogs`).set(c.auth)).body.data as Array<
        Record<string, unknown>
      >;

    it('a pause through one process stops the retry of a delivery the other recorded', async () => {
      const c = await newCustomer('Paused Elsewhere SA');
      const r = await new Receiver().start();
      receivers.push(r);
      r.fallback = { status: 500 };
      const sub = await supertest(a.url)
        .post('/api/subscriptions')
        .set(c.auth)
        .set(idem())
        .send({ url: r.url, resources: BENEFICIARY_ONLY, allowRetry: true });
      expect(sub.status).to.equal(201);
      expect((await beneficiary(b, c)).status).to.equal(201);
      await eventually(
        async () => r.received.length,
        (n) => n >= 1,
        15000,
        20,
      );
      const paused = await supertest(a.url)
        .patch(`/api/subscriptions/${sub.body.id}`)
        .set(c.auth)
        .set(idem())
        .send({ status: 'DISABLED' });
      expect(paused.status).to.equal(200);
      const sent = r.received.length;
      // The retry was due 1 s after the first attempt (the stack's schedule): it finds the subscription paused.
      const [log] = await eventually(
        () => logs(b, c, sub.body.id),
        (l) => l.length === 1 && l[0].error === 'SUBSCRIPTION_DISABLED',
        15000,
        200,
      );
      expect(log.status).to.equal('FAILED');
      expect(r.received).to.have.length(sent);
    });

    it('a secret rotated through one process signs the next delivery of an event the other recorded', async () => {
      const c = await newCustomer('Rotated Hook SA');
      const r = await new Receiver().start();
      receivers.push(r);
      const sub = await supertest(a.url)
        .post('/api/subscriptions')
        .set(c.auth)
        .set(idem())
        .send({ url: r.url, resources: BENEFICIARY_ONLY });
      expect(sub.status).to.equal(201);
      const rotated = await supertest(a.url)
        .post(`/api/subscriptions/${sub.body.id}/rotate-secret`)
        .set(c.auth)
        .set(idem());
      expect(rotated.status, JSON.stringify(rotated.body)).to.be.oneOf([200, 201]);
      expect((await beneficiary(b, c)).status).to.equal(201);
      const [hit] = await eventually(
        async () => r.received,
        (x) => x.length >= 1,
        15000,
        50,
      );
      new Webhook(rotated.body.secret).verify(hit.body, hit.headers as Record<string, string>);
    });
  });
});
