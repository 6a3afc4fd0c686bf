// Webhooks end to end: subscriptions through the API, events from real operations and beneficiaries, delivered
// by the delivery workflow to real HTTP receivers on 127.0.0.1 (the test stack allows private URLs; the URL
// rules themselves are tested with an injected resolver in webhook-url-rules.test.ts).
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { systemEm } from '../../db/orm';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { activeAccount } from '../helpers/fixtures';
import { fund, untilStatus } from '../helpers/money';
import { closedPortUrl, Receiver } from '../helpers/receiver';
import { eventually, idem, newCustomer, stack, TestCustomer, withoutRelay } from '../helpers/stack';
import { cambio, cambioFails } from '../helpers/cli';

const BENEFICIARY_ONLY = [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }];

describe('webhooks', function () {
  this.timeout(60000);
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await new Receiver().start();
    receivers.push(r);
    return r;
  };
  after(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
  });

  async function subscribe(c: TestCustomer, body: Record<string, unknown>) {
    const { http } = await stack();
    const res = await http.post('/api/subscriptions').set(c.auth).set(idem()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { id: string; secret: string; url: string };
  }

  /** An event the customer causes: a new beneficiary's instruction is CREATED. */
  async function createBeneficiary(c: TestCustomer, key = `p${Date.now()}${Math.random()}@example.com`) {
    const { http } = await stack();
    const res = await http
      .post('/api/beneficiaries')
      .set(c.auth)
      .set(idem())
      .send(beneficiaryBody(pixInstruction('EMAIL', key)));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body;
  }

  async function logs(c: TestCustomer, subscriptionId: string) {
    const { http } = await stack();
    const res = await http.get(`/api/subscriptions/${subscriptionId}/executionLogs?limit=100`).set(c.auth);
    expect(res.status).to.equal(200);
    return res.body.data as Array<Record<string, any>>;
  }

  /** Waits until the log's delivery workflow has ended: after that no attempt of it can come. */
  async function deliveryEnded(executionLogId: string) {
    const { services } = await stack();
    return services.temporal.workflow.getHandle(`webhook-delivery-${executionLogId}`).result();
  }

  const untilLog = (
    c: TestCustomer,
    subscriptionId: string,
    ok: (l: Record<string, any>) => boolean,
    timeoutMs = 20000,
  ) =>
    eventually(
      () => logs(c, subscriptionId),
      (ls) => ls.length > 0 && ok(ls[0]),
      timeoutMs,
    ).then((ls) => ls[0]);

  describe('subscriptions', () => {
    it('creates with a whsec_ secret shown once; reads never carry it; includeAll lists every resource', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const created = await subscribe(c, { url: 'https://example.com/hooks', includeAll: true });
      expect(created.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(created.secret.slice(6), 'base64')).to.have.length(32);
      const read = await http.get(`/api/subscriptions/${created.id}`).set(c.auth);
      expect(read.status).to.equal(200);
      expect(read.body).to.not.have.property('secret');
      expect(JSON.stringify(read.body)).to.not.include(created.secret.slice(6));
      expect(read.body).to.include({
        companyId: c.customerId,
        url: 'https://example.com/hooks',
        allowRetry: false,
        includeAll: true,
      });
      expect(read.body.resources).to.deep.equal([
        { name: 'OPERATION', events: ['OPERATION_REQUESTED', 'OPERATION_COMPLETED', 'OPERATION_FAILED'] },
        {
          name: 'BENEFICIARY',
          events: [
            'BENEFICIARY_PAYMENT_INSTRUCTION_CREATED',
            'BENEFICIARY_PAYMENT_INSTRUCTION_APPROVED',
            'BENEFICIARY_PAYMENT_INSTRUCTION_REJECTED',
          ],
        },
        { name: 'ASSET', events: ['ASSET_ACTIVATED'] },
        { name: 'STATEMENT', events: ['STATEMENT_ISSUED'] },
      ]);
      const stored = await systemEm((await stack()).services.orm).execute(
        'select secret_encrypted from webhook_subscriptions where id = ?',
        [created.id],
      );
      expect(stored[0].secret_encrypted).to.not.include(created.secret.slice(6));
    });

    it('includeAll follows the catalogue: a type added after the subscription is delivered and listed', async () => {
      const { http, services } = await stack();
      const c = await newCustomer();
      const r = await receiver();
      const sub = await subscribe(c, { url: r.url, includeAll: true });
      // As an includeAll subscription created before BENEFICIARY joined the catalogue stored it (STATEMENT joined
      // it later, on 26 November, so every includeAll subscription older than that is such a row).
      const older = [{ name: 'OPERATION', events: ['OPERATION_REQUESTED', 'OPERATION_COMPLETED', 'OPERATION_FAILED'] }];
      await systemEm(services.orm).execute('update webhook_subscriptions set resources = ?::jsonb where id = ?', [
        JSON.stringify(older),
        sub.id,
      ]);
      const read = await http.get(`/api/subscriptions/${sub.id}`).set(c.auth);
      expect(read.body.resources.map((x: { name: string }) => x.name)).to.deep.equal([
        'OPERATION',
        'BENEFICIARY',
        'ASSET',
        'STATEMENT',
      ]);
      await createBeneficiary(c);
      const log = await untilLog(c, sub.id, (l) => l.status === 'SUCCESS');
      expect(log.eventType).to.equal('BENEFICIARY_PAYMENT_INSTRUCTION_CREATED');
      expect(r.received).to.have.length(1);
    });

    it("seals a create's and a rotation's secret in its key's stored answer; a replay answers it", async () => {
      const { http, services } = await stack();
      const c = await newCustomer();
      const body = { url: 'https://example.com/hooks', includeAll: true };
      const createKey = { 'X-Idempotency-Key': randomUUID() };
      const created = await http.post('/api/subscriptions').set(c.auth).set(createKey).send(body);
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const rotateKey = { 'X-Idempotency-Key': randomUUID() };
      const rotate = () => http.post(`/api/subscriptions/${created.body.id}/rotate-secret`).set(c.auth).set(rotateKey);
      const rotated = await rotate();
      expect(rotated.status).to.equal(200);

      // Decision 0028: a database dump alone signs nothing. The key's row is part of the dump for 24 h.
      const stored = (await systemEm(services.orm).execute(
        'select response_body::text as body from idempotency_keys where customer_id = ? and key in (?, ?)',
        [c.customerId, createKey['X-Idempotency-Key'], rotateKey['X-Idempotency-Key']],
      )) as Array<{ body: string }>;
      expect(stored).to.have.length(2);
      for (const { body: answer } of stored) {
        expect(answer).to.not.include(created.body.secret.slice(6)).and.not.include(rotated.body.secret.slice(6));
        expect(answer).to.not.include('whsec_');
      }

      const createdAgain = await http.post('/api/subscriptions').set(c.auth).set(createKey).send(body);
      expect([createdAgain.status, createdAgain.headers['idempotent-replayed']]).to.deep.equal([201, 'true']);
      expect(createdAgain.body).to.deep.equal(created.body);
      const rotatedAgain = await rotate();
      expect([rotatedAgain.status, rotatedAgain.headers['idempotent-replayed']]).to.deep.equal([200, 'true']);
      expect(rotatedAgain.body).to.deep.equal(rotated.body);
      const listed = await http.get('/api/subscriptions').set(c.auth);
      expect(listed.body.data.map((sub: { id: string }) => sub.id)).to.deep.equal([created.body.id]);
    });

    it(
      'refuses bad resources with 400 VALIDATION_ERROR and a missing or non-http URL with ' + 'INVALID_WEBHOOK_URL',
      async () => {
        const { http } = await stack();
        const c = await newCustomer();
        const bad = [
          { url: 'https://example.com/h', resources: [{ name: 'PAYMENTS', events: ['OPERATION_REQUESTED'] }] },
          { url: 'https://example.com/h', resources: [{ name: 'OPERATION', events: ['ASSET_ACTIVATED'] }] },
          { url: 'https://example.com/h', resources: [{ name: 'OPERATION', events: [] }] },
          {
            url: 'https://example.com/h',
            resources: [{ name: 'OPERATION', events: ['OPERATION_FAILED', 'OPERATION_FAILED'] }],
          },
          {
            url: 'https://example.com/h',
            resources: [
              { name: 'ASSET', events: ['ASSET_ACTIVATED'] },
              { name: 'ASSET', events: ['ASSET_ACTIVATED'] },
            ],
          },
          { url: 'https://example.com/h', resources: [] },
          { url: 'https://example.com/h' },
        ];
        for (const body of bad) {
          const res = await http.post('/api/subscriptions').set(c.auth).set(idem()).send(body);
          expect(res.status, JSON.stringify(body)).to.equal(400);
          expect(res.body.code).to.equal('VALIDATION_ERROR');
        }
        for (const url of ['ftp://example.com/h', 'not a url']) {
          const res = await http.post('/api/subscriptions').set(c.auth).set(idem()).send({ url, includeAll: true });
          expect(res.status).to.equal(400);
          expect(res.body.code).to.equal('INVALID_WEBHOOK_URL');
        }
      },
    );

    it('patches only the given fields, lists with filters, deletes with 204 and 404s after', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const a = await subscribe(c, { url: 'https://a.example.com/h', resources: BENEFICIARY_ONLY });
      await subscribe(c, { url: 'https://b.example.com/h', includeAll: true, allowRetry: true });
      const patched = await http.patch(`/api/subscriptions/${a.id}`).set(c.auth).set(idem()).send({ allowRetry: true });
      expect(patched.status).to.equal(200);
      expect(patched.body).to.include({ url: 'https://a.example.com/h', allowRetry: true, includeAll: false });
      expect(patched.body.resources).to.deep.equal(BENEFICIARY_ONLY);
      const all = await http.get('/api/subscriptions').set(c.auth);
      expect(all.body.meta.total).to.equal(2);
      const filtered = await http
        .get('/api/subscriptions')
        .query({ filters: 'url[eq]=https://a.example.com/h' })
        .set(c.auth);
      expect(filtered.status).to.equal(200);
      expect(filtered.body.data.map((s: { id: string }) => s.id)).to.deep.equal([a.id]);
      expect((await http.delete(`/api/subscriptions/${a.id}`).set(c.auth)).status).to.equal(204);
      expect((await http.get(`/api/subscriptions/${a.id}`).set(c.auth)).status).to.equal(404);
      expect((await http.delete(`/api/subscriptions/${a.id}`).set(c.auth)).status).to.equal(404);
      expect((await http.get('/api/subscriptions').set(c.auth)).body.meta.total).to.equal(1);
      // Its logs stay readable.
      expect((await http.get(`/api/subscriptions/${a.id}/executionLogs`).set(c.auth)).status).to.equal(200);
    });

    it('caps live subscriptions per customer: racing POSTs at the cap minus one give one 201, others 422', async () => {
      const { http, config } = await stack();
      // A deployment's WEBHOOK_SUBSCRIPTIONS_MAX of 16 (the default is 100); the stack's config is read at each create.
      const CAP = 16;
      const before = config.webhookSubscriptionsMax;
      config.webhookSubscriptionsMax = CAP;
      try {
        const c = await newCustomer();
        const other = await newCustomer();
        const body = (i: number) => ({ url: `https://example.com/hooks/${i}`, resources: BENEFICIARY_ONLY });
        const created = [];
        for (let i = 1; i < CAP; i++) created.push(await subscribe(c, body(i)));
        // A paused subscription still counts (its deliveries are still logged); a deleted one no longer does.
        await http.patch(`/api/subscriptions/${created[0].id}`).set(c.auth).set(idem()).send({ status: 'DISABLED' });
        const post = (i: number) => http.post('/api/subscriptions').set(c.auth).set(idem()).send(body(i));
        const raced = await Promise.all(Array.from({ length: 8 }, (_, i) => post(100 + i)));
        const outcomes = raced.map((r) => `${r.status} ${r.body.code ?? ''}`.trim()).sort();
        expect(outcomes).to.deep.equal(['201', ...Array(7).fill('422 SUBSCRIPTION_LIMIT_REACHED')]);
        const refused = raced.find((r) => r.status === 422)!;
        expect(refused.body.details).to.deep.equal({ limit: CAP });
        expect((await http.get('/api/subscriptions').set(c.auth)).body.meta.total).to.equal(CAP);
        // Another customer is not counted against it.
        await subscribe(other, body(1));
        expect((await http.delete(`/api/subscriptions/${created[1].id}`).set(c.auth)).status).to.equal(204);
        await subscribe(c, body(200));
        const again = await http.post('/api/subscriptions').set(c.auth).set(idem()).send(body(201));
        expect([again.status, again.body.code]).to.deep.equal([422, 'SUBSCRIPTION_LIMIT_REACHED']);
      } finally {
        config.webhookSubscriptionsMax = before;
      }
    });
  });

  describe('delivery', () => {
    it(
      'POSTs the event with the Standard Webhooks headers, verifiable with the standardwebhooks library; ' +
        'logs SUCCESS',
      async () => {
        const c = await newCustomer();
        const r = await receiver();
        const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
        const b = await createBeneficiary(c);
        const log = await untilLog(c, sub.id, (l) => l.status === 'SUCCESS');
        expect(r.received).to.have.length(1);
        const [req] = r.received;
        expect(req.headers['content-type']).to.equal('application/json');
        expect(req.headers['x-event-type']).to.equal('BENEFICIARY_PAYMENT_INSTRUCTION_CREATED');
        expect(req.headers['x-message-id']).to.equal(log.messageId);
        expect(req.headers['webhook-id']).to.equal(log.messageId);
        expect(Number(req.headers['webhook-timestamp'])).to.be.closeTo(Date.now() / 1000, 30);
        const verified = new Webhook(sub.secret).verify(req.body, req.headers as Record<string, string>);
        expect(verified).to.deep.equal(JSON.parse(req.body));
        expect(() =>
          new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(
            req.body,
            req.headers as Record<string, string>,
          ),
        ).to.throw();
        // The spec's payload, no envelope; the log holds the body exactly as sent.
        const payload = JSON.parse(req.body);
        expect(payload).to.include({ customerId: c.customerId, beneficiaryId: b.id });
        expect(payload.instruction.currentState.status).to.equal('PENDING_REVIEW');
        expect(log).to.include({
          companyId: c.customerId,
          subscriptionId: sub.id,
          eventType: 'BENEFICIARY_PAYMENT_INSTRUCTION_CREATED',
          url: r.url,
          payload: req.body,
          httpStatus: 200,
          status: 'SUCCESS',
          retryAttempts: 0,
          error: null,
        });
        const one = await (await stack()).http.get(`/api/subscriptions/${sub.id}/executionLogs/${log.id}`).set(c.auth);
        expect(one.status).to.equal(200);
        expect(one.body).to.deep.equal(log);
      },
    );

    it('retries a 500 on the schedule with the same message id and body, a fresh signature each time', async () => {
      const c = await newCustomer();
      const r = await receiver();
      r.script = [{ status: 500 }, { status: 503 }];
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY, allowRetry: true });
      await createBeneficiary(c);
      const log = await untilLog(c, sub.id, (l) => l.status === 'SUCCESS');
      expect(log).to.include({ httpStatus: 200, retryAttempts: 2, error: null });
      expect(r.received).to.have.length(3);
      expect(new Set(r.received.map((x) => x.headers['webhook-id']))).to.deep.equal(new Set([log.messageId]));
      expect(new Set(r.received.map((x) => x.body)).size).to.equal(1);
      for (const x of r.received) new Webhook(sub.secret).verify(x.body, x.headers as Record<string, string>);
      // The test schedule is 1 s, 1 s.
      expect(r.received[1].at - r.received[0].at).to.be.at.least(900);
    });

    it('without allowRetry makes one attempt: a 500 is FAILED with retryAttempts 0', async () => {
      const c = await newCustomer();
      const r = await receiver();
      r.fallback = { status: 500 };
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      await createBeneficiary(c);
      const log = await untilLog(c, sub.id, (l) => l.status === 'FAILED');
      expect(log).to.include({ httpStatus: 500, retryAttempts: 0, error: 'HTTP 500' });
      expect(await deliveryEnded(log.id)).to.deep.equal({ delivered: false, attempts: 1 });
      expect(r.received).to.have.length(1);
    });

    it(
      'logs a network error (closed port) and a timeout with httpStatus 0; after the last retry it stays ' + 'FAILED',
      async () => {
        const c = await newCustomer();
        const closed = await subscribe(c, {
          url: await closedPortUrl(),
          resources: BENEFICIARY_ONLY,
          allowRetry: true,
        });
        const slow = await receiver();
        slow.fallback = { status: 200, delayMs: 4000 };
        const timeout = await subscribe(c, { url: slow.url, resources: BENEFICIARY_ONLY });
        await createBeneficiary(c);
        const refused = await untilLog(c, closed.id, (l) => l.retryAttempts === 2);
        expect(refused).to.include({ status: 'FAILED', httpStatus: 0 });
        expect(refused.error).to.match(/ECONNREFUSED/);
        const timedOut = await untilLog(c, timeout.id, (l) => l.status === 'FAILED');
        expect(timedOut).to.include({ httpStatus: 0, retryAttempts: 0 });
        expect(timedOut.error).to.match(/timeout/);
        expect(await deliveryEnded(refused.id)).to.deep.equal({ delivered: false, attempts: 3 });
        expect((await logs(c, closed.id))[0]).to.include({ retryAttempts: 2, status: 'FAILED' });
      },
    );

    it('does not follow a redirect: a 302 is FAILED and the target gets nothing', async () => {
      const c = await newCustomer();
      const target = await receiver();
      const r = await receiver();
      r.fallback = { status: 302, headers: { location: target.url } };
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      await createBeneficiary(c);
      const log = await untilLog(c, sub.id, (l) => l.status === 'FAILED');
      expect(log.httpStatus).to.equal(302);
      expect(log.error).to.match(/redirect/);
      expect(target.received).to.have.length(0);
    });

    it('after a rotation signs with both secrets for 24 h, the new one first; both verify', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const r = await receiver();
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      const rotated = await http.post(`/api/subscriptions/${sub.id}/rotate-secret`).set(c.auth).set(idem());
      expect(rotated.status).to.equal(200);
      expect(Object.keys(rotated.body)).to.deep.equal(['secret']);
      expect(rotated.body.secret)
        .to.match(/^whsec_/)
        .and.not.equal(sub.secret);
      await createBeneficiary(c);
      await untilLog(c, sub.id, (l) => l.status === 'SUCCESS');
      const [req] = r.received;
      const signatures = String(req.headers['webhook-signature']).split(' ');
      expect(signatures).to.have.length(2);
      const at = new Date(Number(req.headers['webhook-timestamp']) * 1000);
      expect(signatures[0]).to.equal(
        new Webhook(rotated.body.secret).sign(String(req.headers['webhook-id']), at, req.body),
      );
      expect(signatures[1]).to.equal(new Webhook(sub.secret).sign(String(req.headers['webhook-id']), at, req.body));
      new Webhook(rotated.body.secret).verify(req.body, req.headers as Record<string, string>);
      new Webhook(sub.secret).verify(req.body, req.headers as Record<string, string>);
      // Past the overlap only the new secret signs.
      await systemEm((await stack()).services.orm).execute(
        `update webhook_subscriptions set previous_secret_expires_at = now() - interval '1 second' where id = ?`,
        [sub.id],
      );
      await createBeneficiary(c);
      await eventually(
        async () => r.received.length,
        (n) => n === 2,
      );
      expect(String(r.received[1].headers['webhook-signature']).split(' ')).to.have.length(1);
      expect(() =>
        new Webhook(sub.secret).verify(r.received[1].body, r.received[1].headers as Record<string, string>),
      ).to.throw();
    });

    it(
      'redelivers by hand after a failure: same message id and body, retryAttempts + 1; 409 while in ' + 'progress',
      async () => {
        const { http } = await stack();
        const c = await newCustomer();
        const r = await receiver();
        r.script = [{ status: 500 }, { status: 200, delayMs: 1500 }];
        const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
        await createBeneficiary(c);
        const failed = await untilLog(c, sub.id, (l) => l.status === 'FAILED');
        // The log turns FAILED a moment before its workflow ends; until then a redelivery is (rightly) 409.
        await deliveryEnded(failed.id);
        const path = `/api/subscriptions/${sub.id}/executionLogs/${failed.id}/redeliver`;
        const accepted = await http.post(path).set(c.auth).set(idem());
        expect(accepted.status).to.equal(202);
        expect(accepted.body).to.include({ id: failed.id, messageId: failed.messageId });
        const again = await http.post(path).set(c.auth).set(idem());
        expect(again.status).to.equal(409);
        expect(again.body.code).to.equal('DELIVERY_IN_PROGRESS');
        const done = await untilLog(c, sub.id, (l) => l.status === 'SUCCESS');
        expect(done).to.include({
          retryAttempts: 1,
          httpStatus: 200,
          messageId: failed.messageId,
          payload: failed.payload,
        });
        expect(r.received).to.have.length(2);
        expect(r.received[1].headers['webhook-id']).to.equal(failed.messageId);
        expect(r.received[1].body).to.equal(r.received[0].body);
        // Once more after success works too and counts again.
        expect((await http.post(path).set(c.auth).set(idem())).status).to.equal(202);
        await untilLog(c, sub.id, (l) => l.retryAttempts === 2);
        expect(r.received).to.have.length(3);
      },
    );

    it('the operator CLI redelivers an execution log by id (cambio webhook redeliver)', async () => {
      const c = await newCustomer();
      const r = await receiver();
      r.script = [{ status: 500 }];
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      await createBeneficiary(c);
      const failed = await untilLog(c, sub.id, (l) => l.status === 'FAILED');
      await deliveryEnded(failed.id);
      const { stdout } = await cambio('webhook', 'redeliver', failed.id, '--json');
      expect(JSON.parse(stdout)).to.include({ id: failed.id, messageId: failed.messageId, subscriptionId: sub.id });
      const missing = await cambioFails('webhook', 'redeliver', 'nope');
      expect(missing.exitCode).to.equal(1);
      expect(missing.body.code).to.equal('NOT_FOUND');
      await untilLog(c, sub.id, (l) => l.status === 'SUCCESS');
    });
  });

  describe('fan-out and isolation', () => {
    it(
      "sends only to subscriptions that existed when the event was recorded; another customer's are 404 and " +
        'never receive',
      async () => {
        const { http } = await stack();
        const a = await newCustomer('A Ltda');
        const b = await newCustomer('B Ltda');
        const ra = await receiver();
        const rb = await receiver();
        const subA = await subscribe(a, { url: ra.url, resources: BENEFICIARY_ONLY });
        await createBeneficiary(a);
        await untilLog(a, subA.id, (l) => l.status === 'SUCCESS');
        const late = await receiver();
        const subLate = await subscribe(a, { url: late.url, resources: BENEFICIARY_ONLY });
        const subB = await subscribe(b, { url: rb.url, includeAll: true });
        await createBeneficiary(b);
        await untilLog(b, subB.id, (l) => l.status === 'SUCCESS');
        // Nothing to observe for what must not happen (a delivery to `late`, or across customers): a short grace.
        await new Promise((res) => setTimeout(res, 500));
        expect(ra.received).to.have.length(1);
        expect(late.received).to.have.length(0);
        expect(rb.received).to.have.length(1);
        expect(JSON.parse(rb.received[0].body).customerId).to.equal(b.customerId);
        expect(await logs(a, subLate.id)).to.deep.equal([]);

        const [logA] = await logs(a, subA.id);
        for (const path of [
          `/api/subscriptions/${subA.id}`,
          `/api/subscriptions/${subA.id}/executionLogs`,
          `/api/subscriptions/${subA.id}/executionLogs/${logA.id}`,
        ]) {
          expect((await http.get(path).set(b.auth)).status, path).to.equal(404);
        }
        expect(
          (await http.patch(`/api/subscriptions/${subA.id}`).set(b.auth).set(idem()).send({ allowRetry: true })).status,
        ).to.equal(404);
        expect(
          (await http.post(`/api/subscriptions/${subA.id}/rotate-secret`).set(b.auth).set(idem())).status,
        ).to.equal(404);
        expect(
          (await http.post(`/api/subscriptions/${subA.id}/executionLogs/${logA.id}/redeliver`).set(b.auth).set(idem()))
            .status,
        ).to.equal(404);
        expect((await http.delete(`/api/subscriptions/${subA.id}`).set(b.auth)).status).to.equal(404);
        expect(
          (await http.get('/api/subscriptions').set(b.auth)).body.data.map((s: { id: string }) => s.id),
        ).to.deep.equal([subB.id]);
      },
    );

    it('a deleted subscription gets no further attempts', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const r = await receiver();
      r.fallback = { status: 500 };
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY, allowRetry: true });
      await createBeneficiary(c);
      // Deleted as soon as the first attempt reaches the receiver: the schedule ([1, 1] s) has two retries to come.
      await eventually(
        async () => r.received.length,
        (n) => n >= 1,
        20000,
        10,
      );
      expect((await http.delete(`/api/subscriptions/${sub.id}`).set(c.auth)).status).to.equal(204);
      const seen = r.received.length;
      expect(seen, 'deleted before the last attempt').to.be.below(3);
      const first = await untilLog(c, sub.id, () => true);
      // The next attempt finds the subscription gone and ends the delivery; one already under way may still land.
      const ended = (await deliveryEnded(first.id)) as { delivered: boolean; attempts: number };
      expect(ended.attempts).to.be.at.most(seen + 1);
      expect(r.received.length).to.be.at.most(seen + 1);
      const [log] = await logs(c, sub.id);
      expect(log.status).to.equal('FAILED');
    });

    it('a delivery whose subscription is deleted before its first attempt is FAILED SUBSCRIPTION_DELETED', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const r = await receiver();
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      // Every worker down: the event's delivery waits in the outbox while its subscription is deleted.
      await withoutRelay(async () => {
        await createBeneficiary(c);
        expect((await http.delete(`/api/subscriptions/${sub.id}`).set(c.auth)).status).to.equal(204);
      });
      // Its workflow starts once a relay runs again, and finds nothing to send to: the log is closed, not left
      // PENDING where no list shows it (decision 0365).
      const log = await untilLog(c, sub.id, (l) => l.status === 'FAILED');
      expect(log).to.include({ status: 'FAILED', error: 'SUBSCRIPTION_DELETED', httpStatus: 0, retryAttempts: 0 });
      expect(await deliveryEnded(log.id)).to.include({ delivered: false });
      expect(r.received).to.have.length(0);
      const attempts = await http.get(`/api/subscriptions/${sub.id}/executionLogs/${log.id}/attempts`).set(c.auth);
      expect(attempts.status).to.equal(200);
      expect(attempts.body.data).to.deep.equal([]);
    });

    it(
      'operations emit REQUESTED and COMPLETED; transfers COMPLETED (no ' + 'REQUESTED); assets ASSET_ACTIVATED',
      async () => {
        const { http } = await stack();
        const c = await newCustomer();
        const r = await receiver();
        const sub = await subscribe(c, {
          url: r.url,
          resources: [
            { name: 'OPERATION', events: ['OPERATION_REQUESTED', 'OPERATION_COMPLETED', 'OPERATION_FAILED'] },
            { name: 'ASSET', events: ['ASSET_ACTIVATED'] },
          ],
        });
        const account = await activeAccount(c, ['BRL']);
        const target = await activeAccount(c, ['BRL']);
        await fund(c, account.id, 'BRL', '100.00');
        const transfer = await http
          .post('/api/operations/transfer')
          .set(c.auth)
          .set(idem())
          .send({ sourceAccountId: account.id, targetAccountId: target.id, amount: { value: '40.00', asset: 'BRL' } });
        expect(transfer.status).to.equal(201);
        await untilStatus(c, transfer.body.id, 'COMPLETED');
        // 2 ASSET_ACTIVATED, the deposit's REQUESTED and COMPLETED, the transfer's COMPLETED.
        await eventually(
          async () => (await logs(c, sub.id)).filter((l) => l.status === 'SUCCESS').length,
          (n) => n === 5,
        );
        const seen = r.received.map((x) => [
          x.headers['x-event-type'],
          JSON.parse(x.body).id ?? JSON.parse(x.body).accountId,
        ]);
        expect(seen.filter(([, id]) => id === transfer.body.id).map(([t]) => t)).to.deep.equal(['OPERATION_COMPLETED']);
        expect(seen.filter(([t]) => t === 'ASSET_ACTIVATED')).to.have.length(2);
        const transferEvent = JSON.parse(r.received.find((x) => JSON.parse(x.body).id === transfer.body.id)!.body);
        expect(transferEvent.currentState.status).to.equal('COMPLETED');
        expect(transferEvent.intent.type).to.equal('TRANSFER');
      },
    );
  });
});
