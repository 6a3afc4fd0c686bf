// Issue 20: subscriptions that fail for too long are DISABLED (and paused or resumed by PATCH), failed deliveries
// are recovered since a point in time, and events can be read back (GET /api/events). Real receivers on
// 127.0.0.1, the real delivery workflow on Temporal, real Postgres.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { purgeEventsBefore } from '../../db/repositories/events';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { Receiver } from '../helpers/receiver';
import { eventually, idem, newCustomer, stack, TestCustomer, untilStarted, withoutRelay } from '../helpers/stack';

const BENEFICIARY_ONLY = [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }];
type Log = {
  id: string;
  status: string;
  messageId: string;
  payload: string;
  retryAttempts: number;
  httpStatus: number;
  error: string | null;
  createdAt: string;
  updatedAt: string;
};

describe('webhook recovery: disable, recover, events API', function () {
  this.timeout(120000);
  const receivers: Receiver[] = [];
  const receiver = async (status = 200) => {
    const r = await new Receiver().start();
    r.fallback = { status };
    receivers.push(r);
    return r;
  };
  after(async () => Promise.all(receivers.map((r) => r.stop())));

  /** A POST or PATCH with a fresh idempotency key. */
  async function send(c: TestCustomer, method: 'post' | 'patch', path: string, body: object = {}) {
    return (await stack()).http[method](path).set(c.auth).set(idem()).send(body);
  }
  const patchSub = (c: TestCustomer, id: string, body: object) => send(c, 'patch', `/api/subscriptions/${id}`, body);
  const recover = (c: TestCustomer, id: string, body: object) =>
    send(c, 'post', `/api/subscriptions/${id}/recover`, body);
  const redeliver = (c: TestCustomer, subId: string, logId: string) =>
    send(c, 'post', `/api/subscriptions/${subId}/executionLogs/${logId}/redeliver`);

  async function subscribe(c: TestCustomer, body: Record<string, unknown>) {
    const res = await send(c, 'post', '/api/subscriptions', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { id: string };
  }

  /** An event of the customer: a new beneficiary's instruction is CREATED. */
  async function createBeneficiary(c: TestCustomer) {
    const key = `p${Date.now()}${Math.random()}@example.com`;
    const res = await send(c, 'post', '/api/beneficiaries', beneficiaryBody(pixInstruction('EMAIL', key)));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { id: string; paymentInstructions: Array<{ id: string }> };
  }

  async function logs(c: TestCustomer, subscriptionId: string): Promise<Log[]> {
    const path = `/api/subscriptions/${subscriptionId}/executionLogs?limit=100&sortOrder=ASCENDING`;
    const res = await (await stack()).http.get(path).set(c.auth);
    expect(res.status).to.equal(200);
    return res.body.data;
  }
  const untilLogs = (c: TestCustomer, subscriptionId: string, ok: (ls: Log[]) => boolean) =>
    eventually(() => logs(c, subscriptionId), ok, 30000);
  const failedCount = (n: number) => (ls: Log[]) => ls.length === n && ls.every((l) => l.status === 'FAILED');

  async function getSubscription(c: TestCustomer, id: string) {
    const res = await (await stack()).http.get(`/api/subscriptions/${id}`).set(c.auth);
    expect(res.status).to.equal(200);
    return res.body as { status: string; disabledAt: string | null; disabledReason: string | null };
  }

  /** Every delivery row of a subscription, pending ones included (the API shows attempted ones only). */
  async function storedLogs(subscriptionId: string): Promise<number> {
    const sql = 'select count(*)::int as n from execution_logs where subscription_id = ?';
    const rows = await systemEm((await stack()).services.orm).execute(sql, [subscriptionId]);
    return rows[0].n;
  }

  /** The outbox rows (workflows not started yet) whose workflow id begins with `prefix`. */
  async function queuedStarts(prefix: string): Promise<string[]> {
    const sql = 'select workflow_id from workflow_starts where starts_with(workflow_id, ?)';
    const rows = (await systemEm((await stack()).services.orm).execute(sql, [prefix])) as Array<{
      workflow_id: string;
    }>;
    return rows.map((row) => row.workflow_id);
  }

  describe('PATCH', () => {
    it('applies the create rules to resources, whatever includeAll is; status is ACTIVE or DISABLED', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const bad = [
        [{ name: 'BENEFICIARY', events: ['OPERATION_FAILED'] }],
        [
          { name: 'ASSET', events: ['ASSET_ACTIVATED'] },
          { name: 'ASSET', events: ['ASSET_ACTIVATED'] },
        ],
        [],
      ];
      const created = await send(c, 'post', '/api/subscriptions', { url: 'https://example.com/h', resources: bad[0] });
      expect(created.status).to.equal(400);
      expect(created.body.code).to.equal('VALIDATION_ERROR');
      for (const initial of [{ includeAll: true }, { resources: BENEFICIARY_ONLY }]) {
        const sub = await subscribe(c, { url: 'https://example.com/h', ...initial });
        for (const resources of bad) {
          const res = await patchSub(c, sub.id, { resources });
          expect(res.status, `${JSON.stringify(initial)} + ${JSON.stringify(resources)}`).to.equal(400);
          expect(res.body.code).to.equal('VALIDATION_ERROR');
        }
        const read = await http.get(`/api/subscriptions/${sub.id}`).set(c.auth);
        const includeAll = 'includeAll' in initial;
        expect(read.body).to.include({ includeAll, status: 'ACTIVE', disabledAt: null, disabledReason: null });
        const paused = await patchSub(c, sub.id, { status: 'PAUSED' });
        expect(paused.status).to.equal(400);
        const ok = await patchSub(c, sub.id, { includeAll: false, resources: BENEFICIARY_ONLY });
        expect(ok.status).to.equal(200);
        expect(ok.body).to.include({ includeAll: false });
        expect(ok.body.resources).to.deep.equal(BENEFICIARY_ONLY);
      }
    });
  });

  describe('auto-disable', () => {
    let saved: { disable: number; schedule: number[] };
    before(async () => {
      const { config } = await stack();
      saved = { disable: config.webhookDisableAfterSeconds, schedule: config.webhookRetryScheduleSeconds };
      // The worker of the test stack reads this config object at each attempt: a 3 s window instead of 5 days.
      config.webhookDisableAfterSeconds = 3;
    });
    after(async () => {
      const { config } = await stack();
      config.webhookDisableAfterSeconds = saved.disable;
      config.webhookRetryScheduleSeconds = saved.schedule;
    });

    it('disables after failing for the window (>= 3 attempts); sends nothing while DISABLED; resumes', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const r = await receiver(500);
      const witness = await receiver(200);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      const other = await subscribe(c, { url: witness.url, resources: BENEFICIARY_ONLY });

      await createBeneficiary(c);
      const [first] = await untilLogs(c, sub.id, failedCount(1));
      // Another customer's endpoint fails 3 times within a moment: 3 attempts, but not for the window.
      const quick = await newCustomer();
      const quickSub = await subscribe(quick, { url: (await receiver(500)).url, resources: BENEFICIARY_ONLY });
      await Promise.all([createBeneficiary(quick), createBeneficiary(quick), createBeneficiary(quick)]);
      await untilLogs(quick, quickSub.id, failedCount(3));
      expect((await getSubscription(quick, quickSub.id)).status).to.equal('ACTIVE');

      // Past the window since the first failure, but only the second attempt: still ACTIVE.
      await eventually(
        async () => Date.now(),
        (now) => now > Date.parse(first.updatedAt) + 3100,
        10000,
      );
      await createBeneficiary(c);
      await untilLogs(c, sub.id, failedCount(2));
      expect((await getSubscription(c, sub.id)).status).to.equal('ACTIVE');
      // The third failed attempt: every attempt failed for the window, 3 of them.
      await createBeneficiary(c);
      await untilLogs(c, sub.id, failedCount(3));
      const disabled = await getSubscription(c, sub.id);
      expect(disabled.status).to.equal('DISABLED');
      expect(disabled.disabledReason).to.match(/every delivery attempt failed .* \(3 attempts\)/);
      expect(Date.parse(disabled.disabledAt!) - Date.parse(first.updatedAt)).to.be.at.least(3000);
      expect(r.received).to.have.length(3);

      // While DISABLED: the event is recorded and reaches the other subscription; this one's delivery is logged
      // FAILED SUBSCRIPTION_DISABLED with no attempt, so recover can send it once the subscription is ACTIVE.
      const during = await createBeneficiary(c);
      expect(await storedLogs(sub.id)).to.equal(4);
      const held = (await untilLogs(c, sub.id, failedCount(4)))[3];
      expect(held).to.include({ error: 'SUBSCRIPTION_DISABLED', httpStatus: 0, retryAttempts: 0 });
      await eventually(
        async () => witness.received.length,
        (n) => n === 4,
      );
      expect(r.received).to.have.length(3);
      type Event = { payload: { beneficiaryId: string } };
      const events = (await http.get('/api/events?limit=100').set(c.auth)).body.data as Event[];
      expect(events.map((e) => e.payload.beneficiaryId)).to.include(during.id);
      // Recover and redeliver are refused while it is DISABLED.
      const refused = [await recover(c, sub.id, { since: first.createdAt }), await redeliver(c, sub.id, first.id)];
      const answers = refused.map((res) => [res.status, res.body.code]);
      expect(answers).to.deep.equal(Array(2).fill([409, 'SUBSCRIPTION_DISABLED']));

      // Re-enabled: the failure tracking starts afresh, so one more failure does not disable it again.
      const resumed = await patchSub(c, sub.id, { status: 'ACTIVE' });
      expect(resumed.status).to.equal(200);
      expect(resumed.body).to.include({ status: 'ACTIVE', disabledAt: null, disabledReason: null });
      await createBeneficiary(c);
      await untilLogs(c, sub.id, failedCount(5));
      expect((await getSubscription(c, sub.id)).status).to.equal('ACTIVE');
      r.fallback = { status: 200 };
      await createBeneficiary(c);
      const after = await untilLogs(c, sub.id, (ls) => ls.length === 6 && ls[5].status === 'SUCCESS');
      expect(r.received).to.have.length(5);
      expect(JSON.parse(r.received[4].body).beneficiaryId).to.equal(JSON.parse(after[5].payload).beneficiaryId);
      expect(other.id).to.be.a('string');
    });

    it('a pause (PATCH DISABLED) stops pending retries; once ACTIVE, recover sends the stopped one', async () => {
      const { services, config } = await stack();
      config.webhookRetryScheduleSeconds = [3, 3];
      const c = await newCustomer();
      const r = await receiver(500);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY, allowRetry: true });
      await createBeneficiary(c);
      const [failed] = await untilLogs(c, sub.id, failedCount(1));
      const paused = await patchSub(c, sub.id, { status: 'DISABLED' });
      expect(paused.status).to.equal(200);
      expect(paused.body.status).to.equal('DISABLED');
      expect(paused.body.disabledReason).to.match(/paused by the customer/);
      // The retry wakes up, finds the subscription DISABLED, sends nothing and ends the delivery.
      const result = await services.temporal.workflow.getHandle(`webhook-delivery-${failed.id}`).result();
      expect(result).to.deep.equal({ delivered: false, attempts: 2 });
      expect(r.received).to.have.length(1);
      expect((await logs(c, sub.id))[0]).to.include({ status: 'FAILED', retryAttempts: 0 });

      expect((await patchSub(c, sub.id, { status: 'ACTIVE' })).status).to.equal(200);
      r.fallback = { status: 200 };
      const recovered = await recover(c, sub.id, { since: failed.createdAt });
      expect(recovered.status).to.equal(202);
      expect(recovered.body).to.deep.equal({ count: 1 });
      await untilLogs(c, sub.id, (ls) => ls[0].status === 'SUCCESS');
      expect(r.received.map((x) => x.headers['webhook-id'])).to.deep.equal([failed.messageId, failed.messageId]);
    });
  });

  describe('recover', () => {
    it('sends exactly the FAILED deliveries of [since, until) once more, same message ids and bodies', async () => {
      const { http } = await stack();
      const c = await newCustomer();
      const r = await receiver(500);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      // e1 FAILED, e2 SUCCESS, e3 FAILED: the window; e4 FAILED after it.
      await createBeneficiary(c);
      await untilLogs(c, sub.id, (ls) => ls.length === 1);
      r.fallback = { status: 200 };
      await createBeneficiary(c);
      await untilLogs(c, sub.id, (ls) => ls.length === 2);
      r.fallback = { status: 500 };
      await createBeneficiary(c);
      await untilLogs(c, sub.id, (ls) => ls.length === 3);
      await createBeneficiary(c);
      const before = await untilLogs(c, sub.id, (ls) => ls.length === 4);
      expect(before.map((l) => l.status)).to.deep.equal(['FAILED', 'SUCCESS', 'FAILED', 'FAILED']);
      const window = { since: before[0].createdAt, until: before[3].createdAt };

      r.fallback = { status: 200 };
      const key = idem();
      const path = `/api/subscriptions/${sub.id}/recover`;
      const res = await http.post(path).set(c.auth).set(key).send(window);
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      expect(res.body).to.deep.equal({ count: 2 });
      // The same key replays the answer and queues nothing more.
      const replay = await http.post(path).set(c.auth).set(key).send(window);
      expect(replay.status).to.equal(202);
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.body).to.deep.equal({ count: 2 });

      const after = await untilLogs(c, sub.id, (ls) => ls[0].status === 'SUCCESS' && ls[2].status === 'SUCCESS');
      expect(after.map((l) => [l.status, l.retryAttempts])).to.deep.equal([
        ['SUCCESS', 1],
        ['SUCCESS', 0],
        ['SUCCESS', 1],
        ['FAILED', 0],
      ]);
      // Once each, same id and body as the first attempt; nothing else was sent.
      expect(r.received).to.have.length(6);
      for (const [i, log] of before.entries()) {
        const sent = r.received.filter((x) => x.headers['webhook-id'] === log.messageId);
        expect(sent, `delivery ${i}`).to.have.length(i === 0 || i === 2 ? 2 : 1);
        for (const x of sent) expect(x.body).to.equal(log.payload);
      }
      // A new recover of the same window finds nothing left; without `until` it reaches now (e4).
      expect((await recover(c, sub.id, window)).body).to.deep.equal({ count: 0 });
      expect((await recover(c, sub.id, { since: window.since })).body).to.deep.equal({ count: 1 });
      await untilLogs(c, sub.id, (ls) => ls[3].status === 'SUCCESS');
      expect(r.received.filter((x) => x.headers['webhook-id'] === before[3].messageId)).to.have.length(2);
    });

    it('goes through the outbox: with no relay the starts wait, a retry adds none, each is sent once', async () => {
      const { http, services } = await stack();
      const c = await newCustomer();
      const r = await receiver(500);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      await createBeneficiary(c);
      const [failed] = await untilLogs(c, sub.id, failedCount(1));
      r.fallback = { status: 200 };
      const key = idem();
      const path = `/api/subscriptions/${sub.id}/recover`;
      const workflowId = await withoutRelay(async () => {
        const res = await http.post(path).set(c.auth).set(key).send({ since: failed.createdAt });
        expect(res.body).to.deep.equal({ count: 1 });
        const again = await http.post(path).set(c.auth).set(key).send({ since: failed.createdAt });
        expect([again.status, again.headers['idempotent-replayed'], again.body.count]).to.deep.equal([202, 'true', 1]);
        expect((await recover(c, sub.id, { since: failed.createdAt })).body).to.deep.equal({ count: 0 });
        const queued = await queuedStarts(`webhook-delivery-${failed.id}-attempt-2-`);
        expect(queued).to.have.length(1);
        expect(r.received).to.have.length(1);
        return queued[0];
      });
      // The relay that comes back starts it (a few milliseconds later).
      const handle = services.temporal.workflow.getHandle(workflowId);
      await untilStarted(handle);
      expect(await handle.result()).to.deep.equal({ delivered: true, attempts: 2 });
      expect(r.received.map((x) => x.headers['webhook-id'])).to.deep.equal([failed.messageId, failed.messageId]);
    });

    it('an attempt a pause closed is sent by the next recover, not lost behind its closed workflow', async () => {
      const { services } = await stack();
      const c = await newCustomer();
      const r = await receiver(500);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      await createBeneficiary(c);
      const [failed] = await untilLogs(c, sub.id, failedCount(1));
      // Attempt 2 is queued, then the customer pauses before it runs: it closes without an attempt.
      await withoutRelay(async () => {
        expect((await recover(c, sub.id, { since: failed.createdAt })).body).to.deep.equal({ count: 1 });
        expect((await patchSub(c, sub.id, { status: 'DISABLED' })).status).to.equal(200);
      });
      const pending = 'select next_attempt from execution_logs where id = ?';
      await eventually(
        () => systemEm(services.orm).execute(pending, [failed.id]),
        (rows) => rows[0].next_attempt === null,
        30000,
      );
      // No response this time: the log's httpStatus is 0, not the 500 of the attempt before (decision 0071).
      expect((await logs(c, sub.id))[0]).to.include({
        status: 'FAILED',
        error: 'SUBSCRIPTION_DISABLED',
        httpStatus: 0,
      });

      // Resumed and recovered: attempt 2 is queued again, and this time it is sent.
      expect((await patchSub(c, sub.id, { status: 'ACTIVE' })).status).to.equal(200);
      r.fallback = { status: 200 };
      expect((await recover(c, sub.id, { since: failed.createdAt })).body).to.deep.equal({ count: 1 });
      const [done] = await untilLogs(c, sub.id, (ls) => ls[0].status === 'SUCCESS');
      expect(done.retryAttempts).to.equal(1);
      expect(r.received.map((x) => x.headers['webhook-id'])).to.deep.equal([failed.messageId, failed.messageId]);
    });

    it('skips deliveries with a retry pending, and refuses bad periods, missing keys and other customers', async () => {
      const { http, config } = await stack();
      const saved = config.webhookRetryScheduleSeconds;
      config.webhookRetryScheduleSeconds = [60];
      const c = await newCustomer();
      const r = await receiver(500);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY, allowRetry: true });
      try {
        await createBeneficiary(c);
        const [failed] = await untilLogs(c, sub.id, failedCount(1));
        const path = `/api/subscriptions/${sub.id}/recover`;
        const res = await http.post(path).set(c.auth).set(idem()).send({ since: failed.createdAt });
        expect(res.status).to.equal(202);
        expect(res.body).to.deep.equal({ count: 0 });
        // A manual redelivery would race the pending retry too.
        expect((await redeliver(c, sub.id, failed.id)).status).to.equal(409);

        const now = Date.now();
        const iso = (ms: number) => new Date(ms).toISOString();
        const cases: Array<[Record<string, unknown>, number, string]> = [
          [{ since: iso(now - 15 * 86_400_000) }, 400, 'INVALID_PERIOD'],
          [{ since: iso(now - 60_000), until: iso(now - 60_000) }, 400, 'INVALID_PERIOD'],
          [{ since: iso(now - 60_000), until: iso(now - 120_000) }, 400, 'INVALID_PERIOD'],
          [{ since: 'yesterday' }, 400, 'VALIDATION_ERROR'],
          [{}, 400, 'VALIDATION_ERROR'],
          // A leap second passes the date-time format but names no instant a Date can hold (decision 0204).
          [{ since: `${iso(now - 86_400_000).slice(0, 10)}T23:59:60Z` }, 400, 'VALIDATION_ERROR'],
          [{ since: iso(now - 86_400_000), until: `${iso(now).slice(0, 10)}T23:59:60Z` }, 400, 'VALIDATION_ERROR'],
        ];
        for (const [body, status, code] of cases) {
          const bad = await http.post(path).set(c.auth).set(idem()).send(body);
          expect([bad.status, bad.body.code], JSON.stringify(body)).to.deep.equal([status, code]);
        }
        const noKey = await http.post(path).set(c.auth).send({ since: failed.createdAt });
        expect([noKey.status, noKey.body.code]).to.deep.equal([400, 'MISSING_IDEMPOTENCY_KEY']);
        const stranger = await newCustomer();
        const theirs = await http.post(path).set(stranger.auth).set(idem()).send({ since: failed.createdAt });
        expect(theirs.status).to.equal(404);
      } finally {
        config.webhookRetryScheduleSeconds = saved;
        // The pending retry wakes to a deleted subscription and sends nothing.
        await http.delete(`/api/subscriptions/${sub.id}`).set(c.auth);
      }
    });
  });

  describe('a delivery whose workflow was terminated', () => {
    it('is redeliverable and recovered once its workflows have ended, and 409 while one runs', async () => {
      const { services, config } = await stack();
      const saved = config.webhookRetryScheduleSeconds;
      config.webhookRetryScheduleSeconds = [60];
      const c = await newCustomer();
      const r = await receiver(500);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY, allowRetry: true });
      try {
        await createBeneficiary(c);
        await createBeneficiary(c);
        const [first, second] = await untilLogs(c, sub.id, failedCount(2));
        // Their workflows sleep until the retry: a redelivery or a recover now would race them.
        const running = await redeliver(c, sub.id, first.id);
        expect([running.status, running.body.code]).to.deep.equal([409, 'DELIVERY_IN_PROGRESS']);
        expect((await recover(c, sub.id, { since: first.createdAt })).body).to.deep.equal({ count: 0 });

        // An operator terminates them by hand (`temporal workflow terminate`): the retries they scheduled never come.
        for (const log of [first, second])
          await services.temporal.workflow.getHandle(`webhook-delivery-${log.id}`).terminate('by hand');
        r.fallback = { status: 200 };
        await withoutRelay(async () => {
          const res = await redeliver(c, sub.id, first.id);
          expect([res.status, res.body.id], JSON.stringify(res.body)).to.deep.equal([202, first.id]);
          // Its attempt is queued, not started: a second redelivery must not queue another beside it.
          expect((await redeliver(c, sub.id, first.id)).status).to.equal(409);
          expect((await recover(c, sub.id, { since: first.createdAt })).body).to.deep.equal({ count: 1 });
        });
        const done = await untilLogs(c, sub.id, (ls) => ls.every((l) => l.status === 'SUCCESS'));
        expect(done.map((l) => l.retryAttempts)).to.deep.equal([1, 1]);
        const sent = r.received.map((x) => x.headers['webhook-id']).sort();
        expect(sent).to.deep.equal([first.messageId, first.messageId, second.messageId, second.messageId].sort());
      } finally {
        config.webhookRetryScheduleSeconds = saved;
      }
    });
  });

  describe('a delivery whose workflow was terminated before its first attempt', () => {
    it('is closed FAILED DELIVERY_STOPPED and sent by recover, not left unlisted for ever', async () => {
      const { services, config } = await stack();
      const saved = config.webhookTimeoutSeconds;
      config.webhookTimeoutSeconds = 20;
      const c = await newCustomer();
      const r = await receiver(200);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      try {
        // Four deliveries hold the endpoint's four permits (WEBHOOK_ENDPOINT_CONCURRENCY) for 12 s; the fifth waits
        // its turn on a timer, with no attempt begun, and an operator terminates its workflow then.
        r.script = Array.from({ length: 4 }, () => ({ status: 200, delayMs: 12000 }));
        for (let i = 0; i < 5; i++) await createBeneficiary(c);
        const waiting = `select l.id, l.created_at from execution_logs l where l.subscription_id = ? and not exists
          (select 1 from webhook_attempts a where a.execution_log_id = l.id)`;
        const rows = await eventually(
          async () => {
            const found = await systemEm(services.orm).execute(waiting, [sub.id]);
            return r.received.length === 4 ? found : [];
          },
          (found) => found.length === 1,
          30000,
        );
        // Started (the relay may be slow on a busy host), then terminated while it waits.
        const stopped = services.temporal.workflow.getHandle(`webhook-delivery-${rows[0].id}`);
        await untilStarted(stopped);
        await stopped.terminate('by hand');
        const done = await untilLogs(c, sub.id, (ls) => ls.length === 4 && ls.every((l) => l.status === 'SUCCESS'));
        expect(done).to.have.length(4);

        const since = new Date(new Date(rows[0].created_at).getTime() - 60_000).toISOString();
        await withoutRelay(async () => {
          expect((await recover(c, sub.id, { since })).body).to.deep.equal({ count: 1 });
          const stopped = (await logs(c, sub.id)).find((l) => l.id === rows[0].id);
          expect(stopped).to.include({ status: 'FAILED', error: 'DELIVERY_STOPPED', httpStatus: 0 });
        });
        const all = await untilLogs(c, sub.id, (ls) => ls.length === 5 && ls.every((l) => l.status === 'SUCCESS'));
        expect(all.map((l) => l.id)).to.include(rows[0].id);
        expect(r.received).to.have.length(5);
      } finally {
        config.webhookTimeoutSeconds = saved;
      }
    });
  });

  describe('a delivery whose workflow was terminated mid-attempt', () => {
    it('stays 409 while the terminated attempt may still be sending: never two at once', async () => {
      const { services, config } = await stack();
      const saved = config.webhookTimeoutSeconds;
      config.webhookTimeoutSeconds = 10;
      const c = await newCustomer();
      const r = await receiver(500);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      try {
        await createBeneficiary(c);
        const [failed] = await untilLogs(c, sub.id, failedCount(1));
        // The redelivered attempt reaches a receiver that takes 8 s to answer; its workflow is terminated meanwhile.
        r.script = [{ status: 200, delayMs: 8000 }];
        expect((await redeliver(c, sub.id, failed.id)).status).to.equal(202);
        await eventually(
          async () => r.received.length,
          (n) => n === 2,
          30000,
        );
        const sql = 'select queued_workflow_id from execution_logs where id = ?';
        const [{ queued_workflow_id: queued }] = await systemEm(services.orm).execute(sql, [failed.id]);
        await services.temporal.workflow.getHandle(queued).terminate('by hand');
        const res = await redeliver(c, sub.id, failed.id);
        expect([res.status, res.body.code]).to.deep.equal([409, 'DELIVERY_IN_PROGRESS']);
        // Once the terminated attempt has let go of its request, the delivery is sent again, after it.
        r.fallback = { status: 200 };
        const again = await eventually(
          () => redeliver(c, sub.id, failed.id),
          (x) => x.status === 202,
          30000,
        );
        expect(again.body.id).to.equal(failed.id);
        await eventually(
          async () => r.received.length,
          (n) => n === 3,
          30000,
        );
        expect(r.received[1].closedAt, 'the terminated attempt was still open').to.be.a('number');
        expect(r.received[2].at).to.be.at.least(r.received[1].closedAt!);
      } finally {
        config.webhookTimeoutSeconds = saved;
      }
    });
  });

  describe('events API', () => {
    it('lists every event of the customer (subscribed or not) by the list conventions, with filters', async () => {
      const { http } = await stack();
      const a = await newCustomer();
      const b = await newCustomer();
      const created = [];
      for (let i = 0; i < 3; i++) created.push(await createBeneficiary(a));
      const review = await http
        .post(`/api/sandbox/payment-instructions/${created[0].paymentInstructions[0].id}/review`)
        .set(a.auth)
        .set(idem())
        .send({ decision: 'APPROVE' });
      expect(review.status).to.equal(200);
      await createBeneficiary(b);

      const list = async () => (await http.get('/api/events?limit=100').set(a.auth)).body;
      const all = await eventually(list, (body) => body.meta?.total === 4);
      expect(all.data.map((e: { type: string }) => e.type).sort()).to.deep.equal([
        'BENEFICIARY_PAYMENT_INSTRUCTION_APPROVED',
        ...Array(3).fill('BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'),
      ]);
      for (const e of all.data) {
        expect(Object.keys(e).sort()).to.deep.equal(['createdAt', 'id', 'payload', 'type']);
        expect(e.payload.customerId).to.equal(a.customerId);
      }
      // Newest first by default; pages of 2 follow the cursor without overlap.
      const createdAts = all.data.map((e: { createdAt: string }) => e.createdAt);
      expect([...createdAts].sort().reverse()).to.deep.equal(createdAts);
      const first = (await http.get('/api/events?limit=2').set(a.auth)).body;
      expect(first.data).to.have.length(2);
      expect(first.meta.total).to.equal(4);
      const next = { limit: 2, cursor: first.meta.nextCursor };
      const second = (await http.get('/api/events').query(next).set(a.auth)).body;
      const ids = (page: Array<{ id: string }>) => page.map((e) => e.id);
      expect(ids([...first.data, ...second.data])).to.deep.equal(ids(all.data));

      const filters = 'type[eq]=BENEFICIARY_PAYMENT_INSTRUCTION_APPROVED';
      const approved = (await http.get('/api/events').query({ filters }).set(a.auth)).body;
      expect(approved.meta.total).to.equal(1);
      expect(approved.data[0].payload.instruction.currentState.status).to.equal('APPROVED');
      const pivot = createdAts[1];
      const newer = (
        await http
          .get('/api/events')
          .query({ filters: `createdAt[gte]=${pivot}` })
          .set(a.auth)
      ).body;
      const older = (
        await http
          .get('/api/events')
          .query({ filters: `createdAt[lt]=${pivot}` })
          .set(a.auth)
      ).body;
      expect(newer.meta.total + older.meta.total).to.equal(4);
      expect(newer.data.every((e: { createdAt: string }) => e.createdAt >= pivot)).to.equal(true);
      expect(older.data.every((e: { createdAt: string }) => e.createdAt < pivot)).to.equal(true);
      const badFilter = await http.get('/api/events').query({ filters: 'payload[eq]=x' }).set(a.auth);
      expect([badFilter.status, badFilter.body.code]).to.deep.equal([400, 'INVALID_FILTER']);

      // One event by id; another customer's is 404, and their list holds only their own.
      const one = await http.get(`/api/events/${all.data[0].id}`).set(a.auth);
      expect(one.status).to.equal(200);
      expect(one.body).to.deep.equal(all.data[0]);
      expect((await http.get(`/api/events/${all.data[0].id}`).set(b.auth)).status).to.equal(404);
      const theirs = (await http.get('/api/events').set(b.auth)).body;
      expect(theirs.meta.total).to.equal(1);
      expect(theirs.data[0].payload.customerId).to.equal(b.customerId);
    });

    it("returns the payload as delivered; the purge removes old events and leaves the logs' payloads", async () => {
      const { http, services, config } = await stack();
      const c = await newCustomer();
      const r = await receiver(200);
      const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
      await createBeneficiary(c);
      const [log] = await untilLogs(c, sub.id, (ls) => ls.length === 1 && ls[0].status === 'SUCCESS');
      const [event] = (await http.get('/api/events').set(c.auth)).body.data;
      expect(JSON.stringify(event.payload)).to.equal(r.received[0].body);
      expect(log.payload).to.equal(r.received[0].body);

      // Aged past EVENT_RETENTION_DAYS, then purged as the worker does.
      const em = systemEm(services.orm);
      await em.execute(`update events set created_at = now() - interval '31 days' where id = ?`, [event.id]);
      const cutoff = new Date(Date.now() - config.eventRetentionDays * 86_400_000);
      const purged = await purgeEventsBefore(systemEm(services.orm), cutoff);
      expect(purged).to.be.at.least(1);
      expect((await http.get(`/api/events/${event.id}`).set(c.auth)).status).to.equal(404);
      const kept = await http.get(`/api/subscriptions/${sub.id}/executionLogs/${log.id}`).set(c.auth);
      expect(kept.status).to.equal(200);
      expect(kept.body.payload).to.equal(r.received[0].body);
    });
  });
});
