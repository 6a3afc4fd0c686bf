// The URL rules with private URLs refused (as in production) and a resolver the test controls: a name that
// resolves to a private address is refused at create and PATCH (400 INVALID_WEBHOOK_URL), and a name that
// resolved publicly at create but points at a private address by attempt time is refused then: FAILED,
// httpStatus 0, nothing sent. Runs its own workers and outbox relays on its own task queues (main and webhooks)
// with that configuration.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { createApp } from '../../api/app';
import type { ServiceContext } from '../../services/context';
import { isPublicAddress } from '../../webhooks/url-policy';
import { queueWorkerOptions } from '../../worker/queues';
import { startWorkflowStartRelay, WorkflowStartRelay } from '../../worker/workflow-start-relay';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { Receiver } from '../helpers/receiver';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { workflowBundle } from '../helpers/workflow-bundle';
import supertest from 'supertest';

describe('webhook URL rules (private addresses refused)', function () {
  this.timeout(90000);
  // What each name resolves to right now; the test changes it to play a DNS rebinding.
  const dns = new Map<string, string[]>();
  // Names whose resolver does not answer now (a temporary DNS failure, not a name that does not exist).
  const dnsDown = new Set<string>();
  let api: ReturnType<typeof supertest>;
  let workers: Worker[] = [];
  let relays: WorkflowStartRelay[] = [];
  let running: Promise<unknown>;
  let connection: NativeConnection;
  let c: TestCustomer;
  let local: Receiver;

  before(async () => {
    const { services, config } = await stack();
    const ctx: ServiceContext = {
      ...services,
      config: {
        ...config,
        taskQueue: `cambio-url-rules-${randomUUID()}`,
        webhookTaskQueue: `cambio-url-rules-webhooks-${randomUUID()}`,
        webhookAllowPrivateUrls: false,
      },
      resolveHost: async (host) => {
        if (dnsDown.has(host)) throw Object.assign(new Error(`getaddrinfo EAI_AGAIN ${host}`), { code: 'EAI_AGAIN' });
        const addresses = dns.get(host);
        if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
        return addresses;
      },
    };
    connection = await NativeConnection.connect({ address: config.temporalAddress });
    const activities = createActivities({
      config: ctx.config,
      orm: ctx.orm,
      rates: ctx.rates,
      temporal: ctx.temporal,
      resolveHost: ctx.resolveHost,
    });
    const bundle = await workflowBundle();
    const queues = [
      { taskQueue: ctx.config.taskQueue, options: {} },
      { taskQueue: ctx.config.webhookTaskQueue, options: queueWorkerOptions('webhooks') },
    ];
    workers = await Promise.all(
      queues.map(({ taskQueue, options }) =>
        Worker.create({
          connection,
          namespace: config.temporalNamespace,
          taskQueue,
          workflowBundle: bundle,
          activities,
          ...options,
        }),
      ),
    );
    running = Promise.all(workers.map((w) => w.run()));
    relays = queues.map(({ taskQueue }) =>
      startWorkflowStartRelay({
        orm: ctx.orm,
        temporal: ctx.temporal,
        taskQueue,
        databaseUrl: ctx.config.databaseUrl,
        eager: false,
        onError: (err) => process.stderr.write(`url rules: outbox relay: ${String(err)}\n`),
      }),
    );
    api = supertest(createApp(ctx).callback());
    c = await newCustomer('Url Rules SA');
    local = await new Receiver().start();
  });

  after(async () => {
    await Promise.all(relays.map((r) => r.stop()));
    for (const w of workers) w.shutdown();
    await running;
    await connection?.close();
    await local?.stop();
  });

  const create = (url: string) =>
    api.post('/api/subscriptions').set(c.auth).set(idem()).send({ url, includeAll: true });

  it('classifies addresses: loopback, private, link-local, CGNAT, ULA and mapped IPv4 are not public', () => {
    for (const a of [
      '10.1.2.3',
      '127.0.0.1',
      '169.254.169.254',
      '172.16.5.4',
      '192.168.1.1',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fd00::1',
      'fc00::1',
      'fe80::1',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
      '224.0.0.1',
    ]) {
      expect(isPublicAddress(a), a).to.equal(false);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect(isPublicAddress(a), a).to.equal(true);
  });

  it(
    'refuses at create: http, loopback literals, a name with any private address, a name that does not ' + 'resolve',
    async () => {
      dns.set('internal.example.test', ['93.184.216.34', '10.0.0.5']);
      dns.set('metadata.example.test', ['169.254.169.254']);
      dns.set('v6.example.test', ['fd12::1']);
      for (const url of [
        'http://public.example.test/h',
        local.url,
        'https://127.0.0.1/h',
        'https://[::1]/h',
        'https://internal.example.test/h',
        'https://metadata.example.test/h',
        'https://v6.example.test/h',
        'https://nowhere.example.test/h',
      ]) {
        const res = await create(url);
        expect(res.status, url).to.equal(400);
        expect(res.body.code, url).to.equal('INVALID_WEBHOOK_URL');
      }
      expect(local.received).to.have.length(0);
    },
  );

  it('answers 503 with Retry-After while DNS does not answer, stores nothing, and the retry creates it', async () => {
    dns.set('flaky-dns.example.test', ['93.184.216.34']);
    dnsDown.add('flaky-dns.example.test');
    const key = idem();
    const send = () =>
      api
        .post('/api/subscriptions')
        .set(c.auth)
        .set(key)
        .send({ url: 'https://flaky-dns.example.test/h', includeAll: true });
    const down = await send();
    expect([down.status, down.body.code]).to.deep.equal([503, 'SERVICE_UNAVAILABLE']);
    expect(down.headers['retry-after']).to.equal('5');
    dnsDown.delete('flaky-dns.example.test');
    const retried = await send();
    expect(retried.status, JSON.stringify(retried.body)).to.equal(201);
    expect(retried.headers['idempotent-replayed']).to.equal(undefined);
    expect(retried.body.url).to.equal('https://flaky-dns.example.test/h');
  });

  it('refuses at PATCH, keeping the subscription as it was', async () => {
    dns.set('good.example.test', ['93.184.216.34']);
    dns.set('bad.example.test', ['10.9.8.7']);
    const created = await create('https://good.example.test/h');
    expect(created.status).to.equal(201);
    const patched = await api
      .patch(`/api/subscriptions/${created.body.id}`)
      .set(c.auth)
      .set(idem())
      .send({ url: 'https://bad.example.test/h' });
    expect(patched.status).to.equal(400);
    expect(patched.body.code).to.equal('INVALID_WEBHOOK_URL');
    expect((await api.get(`/api/subscriptions/${created.body.id}`).set(c.auth)).body.url).to.equal(
      'https://good.example.test/h',
    );
  });

  it(
    're-checks before the attempt: a name now resolving to a private address is FAILED, httpStatus 0, ' +
      'nothing sent',
    async () => {
      dns.set('rebind.example.test', ['93.184.216.34']);
      const created = await create('https://rebind.example.test/h');
      expect(created.status).to.equal(201);
      dns.set('rebind.example.test', ['127.0.0.1']);
      const b = await api
        .post('/api/beneficiaries')
        .set(c.auth)
        .set(idem())
        .send(beneficiaryBody(pixInstruction('EMAIL', 'rebind@example.com')));
      expect(b.status).to.equal(201);
      const logs = await eventually(
        async () =>
          (await api.get(`/api/subscriptions/${created.body.id}/executionLogs`).set(c.auth)).body.data as Array<
            Record<string, unknown>
          >,
        (ls) => ls.length === 1,
      );
      expect(logs[0]).to.include({
        status: 'FAILED',
        httpStatus: 0,
        retryAttempts: 0,
        url: 'https://rebind.example.test/h',
      });
      expect(logs[0].error).to.match(/non-public address 127\.0\.0\.1/);
      expect(local.received).to.have.length(0);
    },
  );
});
