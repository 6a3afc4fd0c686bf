// Nothing due is lost and nothing is sent twice, read adversarially: a delivery pending while its subscription is
// paused ends FAILED SUBSCRIPTION_DISABLED and recover sends it; redelivery goes through the outbox behind the same
// lock as recover; a cancelled attempt aborts its request; the wait for a busy endpoint is bounded; every attempt
// is kept and listed. Real receivers on 127.0.0.1, the real delivery workflow on Temporal, real Postgres.
import { expect } from 'chai';
import { systemEm, tenantEm } from '../../db/orm';
import { inTransaction } from '../../db/transaction';
import { settleAttempt } from '../../db/repositories/webhook-recovery';
import { redeliver as redeliverService } from '../../webhooks/execution-logs';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { Receiver } from '../helpers/receiver';
import { attemptMayBeOpenSeconds } from '../../webhooks/attempt-bound';
import { createWebhookActivities } from '../../webhooks/delivery-activities';
import { eventually, idem, newCustomer, stack, TestCustomer, withoutRelay } from '../helpers/stack';

const BENEFICIARY_ONLY = [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }];
type Log = {
  id: string;
  status: string;
  error: string | null;
  httpStatus: number;
  messageId: string;
  retryAttempts: number;
  createdAt: string;
};
type Attempt = {
  attempt: number;
  attemptedAt: string;
  trigger: string;
  httpStatus: number;
  durationMs: number;
  waitedMs: number;
  error: string | null;
  responseBody: string | null;
};

describe('webhook attempts: nothing due lost, one attempt in flight, every attempt kept', function () {
  this.timeout(120000);
  const receivers: Receiver[] = [];
  const receiver = async (status = 200) => {
    const r = await new Receiver().start();
    r.fallback = { status };
    receivers.push(r);
    return r;
  };
  let saved: { timeout: number; busy: number };
  before(async () => {
    const { config } = await stack();
    saved = { timeout: config.webhookTimeoutSeconds, busy: config.webhookMaxBusyWaitSeconds };
  });
  afterEach(async () => {
    const { config } = await stack();
    config.webhookTimeoutSeconds = saved.timeout;
    config.webhookMaxBusyWaitSeconds = saved.busy;
  });
  after(async () => Promise.all(receivers.map((r) => r.stop())));

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
  async function createBeneficiary(c: TestCustomer) {
    const key = `p${Date.now()}${Math.random()}@example.com`;
    const res = await send(c, 'post', '/api/beneficiaries', beneficiaryBody(pixInstruction('EMAIL', key)));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  }
  async function logs(c: TestCustomer, subscriptionId: string): Promise<Log[]> {
    const path = `/api/subscriptions/${subscriptionId}/executionLogs?limit=100&sortOrder=ASCENDING`;
    const res = await (await stack()).http.get(path).set(c.auth);
    expect(res.status).to.equal(200);
    return res.body.data;
  }
  const untilLogs = (c: TestCustomer, subscriptionId: string, ok: (ls: Log[]) => boolean, ms = 30000) =>
    eventually(() => logs(c, subscriptionId), ok, ms);
  async function attempts(c: TestCustomer, subId: string, logId: string, query = ''): Promise<Attempt[]> {
    const path = `/api/subscriptions/${subId}/executionLogs/${logId}/attempts?sortOrder=ASCENDING${query}`;
    const res = await (await stack()).http.get(path).set(c.auth);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data;
  }
  /** Every delivery row of a subscription, pending ones included (the API shows settled ones only). */
  async function storedLogIds(subscriptionId: string): Promise<string[]> {
    const sql = 'select id from execution_logs where subscription_id = ? order by created_at';
    const rows = await systemEm((await stack()).services.orm).execute(sql, [subscriptionId]);
    return (rows as Array<{ id: string }>).map((r) => r.id);
  }
  const sentTo = (r: Receiver, messageId: string) => r.received.filter((x) => x.headers['webhook-id'] === messageId);

  it('a pause keeps every due delivery: FAILED SUBSCRIPTION_DISABLED, listed; recover sends all of them', async () => {
    const { config } = await stack();
    // A hanging receiver as a real one hangs: the attempts in flight run to the full timeout, which is longer than
    // the beneficiaries' creation and the pause below take (a few seconds), so the first ones are in flight then.
    config.webhookTimeoutSeconds = 6;
    const c = await newCustomer();
    const r = await receiver();
    r.fallback = { delayMs: 60000 };
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
    const since = new Date(Date.now() - 1000).toISOString();
    for (let i = 0; i < 12; i++) await createBeneficiary(c);
    // The endpoint's cap (4) in flight, hanging: then the pause, well inside their 6 s (not a fixed sleep, which on a
    // loaded machine let a second batch of attempts start first).
    await eventually(
      async () => r.received.length,
      (n) => n >= 4,
      30000,
      20,
    );
    expect((await patchSub(c, sub.id, { status: 'DISABLED' })).status).to.equal(200);
    // An event while paused is due as well.
    await createBeneficiary(c);
    const failed = await untilLogs(c, sub.id, (ls) => ls.length === 13 && ls.every((l) => l.status === 'FAILED'));
    const disabled = failed.filter((l) => l.error === 'SUBSCRIPTION_DISABLED');
    // At most the endpoint's cap was in flight at the pause (they time out); the rest never left.
    expect(disabled.length).to.be.at.least(13 - 4 * 2);
    for (const l of disabled) {
      expect(l).to.include({ httpStatus: 0, retryAttempts: 0 });
      expect(await attempts(c, sub.id, l.id)).to.deep.equal([]);
    }
    expect(r.received.length).to.be.at.most(13 - disabled.length);

    r.fallback = { status: 200 };
    expect((await patchSub(c, sub.id, { status: 'ACTIVE' })).status).to.equal(200);
    const recovered = await recover(c, sub.id, { since });
    expect([recovered.status, recovered.body]).to.deep.equal([202, { count: 13 }]);
    const done = await untilLogs(c, sub.id, (ls) => ls.length === 13 && ls.every((l) => l.status === 'SUCCESS'));
    const reached = new Set(r.received.map((x) => x.headers['webhook-id']));
    expect(done.filter((l) => !reached.has(l.messageId))).to.deep.equal([]);
    const after = await attempts(c, sub.id, disabled[0].id);
    expect(after.map((a) => [a.attempt, a.trigger, a.httpStatus])).to.deep.equal([[1, 'RECOVERY', 200]]);
  });

  it('a delivery that settles after a newer one is listed above it: a reader from the top misses nothing', async () => {
    const { config } = await stack();
    config.webhookTimeoutSeconds = 30; // the first attempt waits for the test, not for the stack's 2 s timeout
    const c = await newCustomer();
    const r = await receiver();
    // The first delivery's receiver answers once the test has seen the second listed; the second's answers at once.
    let answerFirst!: () => void;
    r.script = [{ status: 200, until: new Promise<void>((resolve) => (answerFirst = resolve)) }];
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
    await createBeneficiary(c);
    await eventually(
      async () => r.received.length,
      (n) => n === 1,
      30000,
    );
    await createBeneficiary(c);
    const newestFirst = async () => {
      const path = `/api/subscriptions/${sub.id}/executionLogs?limit=100`;
      const res = await (await stack()).http.get(path).set(c.auth);
      expect(res.status).to.equal(200);
      return res.body.data as Log[];
    };
    // A reader of the list from the top (the default, newest first) sees the second delivery, settled first.
    const [second] = await eventually(newestFirst, (ls) => ls.length === 1, 30000);
    expect(second.messageId).to.equal(r.received[1].headers['webhook-id']);
    answerFirst();
    // Then the first settles: it is listed above what the reader has seen, where a reader from the top finds it.
    const both = await eventually(newestFirst, (ls) => ls.length === 2, 30000);
    const sent = r.received.map((x) => x.headers['webhook-id']);
    expect(both.map((l) => l.messageId)).to.deep.equal([sent[0], sent[1]]);
    expect(Date.parse(both[0].createdAt)).to.be.above(Date.parse(second.createdAt));
  });

  it('redelivery goes through the outbox: nothing is sent before COMMIT, and a rollback sends nothing', async () => {
    const { http, services } = await stack();
    const c = await newCustomer();
    const r = await receiver(500);
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
    await createBeneficiary(c);
    const [log] = await untilLogs(c, sub.id, (ls) => ls.length === 1 && ls[0].status === 'FAILED');
    r.fallback = { status: 200 };

    // Redelivered inside a transaction that then rolls back: nothing went out, and the delivery is free again.
    const em = tenantEm(services.orm, c.customerId);
    const rolledBack = inTransaction(em, async (tx) => {
      await redeliverService(services, tx, sub.id, log.id);
      throw new Error('rolled back after the redelivery');
    });
    const thrown = await rolledBack.then(
      () => null,
      (err: Error) => err.message,
    );
    expect(thrown).to.equal('rolled back after the redelivery');
    await new Promise((res) => setTimeout(res, 1000));
    expect(r.received).to.have.length(1);

    await withoutRelay(async () => {
      const accepted = await redeliver(c, sub.id, log.id);
      expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
      expect((await redeliver(c, sub.id, log.id)).body.code).to.equal('DELIVERY_IN_PROGRESS');
      expect((await recover(c, sub.id, { since: log.createdAt })).body).to.deep.equal({ count: 0 });
      await new Promise((res) => setTimeout(res, 500));
      // One start queued for attempt 2 (its id: the attempt and this queue of it).
      const sql = 'select count(*)::int as n from workflow_starts where starts_with(workflow_id, ?)';
      const prefix = `webhook-delivery-${log.id}-attempt-2-`;
      expect((await systemEm(services.orm).execute(sql, [prefix]))[0].n).to.equal(1);
      expect(r.received).to.have.length(1);
    });
    await untilLogs(c, sub.id, (ls) => ls[0].status === 'SUCCESS');
    expect(r.received.map((x) => x.headers['webhook-id'])).to.deep.equal([log.messageId, log.messageId]);
    const listed = await attempts(c, sub.id, log.id);
    expect(listed.map((a) => [a.attempt, a.trigger, a.httpStatus, a.error])).to.deep.equal([
      [1, 'SCHEDULED', 500, 'HTTP 500'],
      [2, 'REDELIVERY', 200, null],
    ]);
    const other = await newCustomer();
    const path = `/api/subscriptions/${sub.id}/executionLogs/${log.id}/attempts`;
    expect((await http.get(path).set(other.auth)).status).to.equal(404);
  });

  it('recover and redelivery raced on the same deliveries queue one attempt each: one POST per attempt', async () => {
    const c = await newCustomer();
    const r = await receiver(500);
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
    for (let i = 0; i < 6; i++) await createBeneficiary(c);
    const failed = await untilLogs(c, sub.id, (ls) => ls.length === 6 && ls.every((l) => l.status === 'FAILED'));
    r.fallback = { status: 200 };
    const since = failed[0].createdAt;
    const answers = await Promise.all([
      recover(c, sub.id, { since }),
      ...failed.map((l) => redeliver(c, sub.id, l.id)),
      recover(c, sub.id, { since }),
    ]);
    const recovered = [answers[0], answers[answers.length - 1]].reduce((n, a) => n + a.body.count, 0);
    const redelivered = answers.slice(1, -1).filter((a) => a.status === 202).length;
    expect(recovered + redelivered, JSON.stringify(answers.map((a) => a.body))).to.equal(6);
    const done = await untilLogs(c, sub.id, (ls) => ls.every((l) => l.status === 'SUCCESS'));
    // Grace for a second POST of the same attempt, which must not come.
    await new Promise((res) => setTimeout(res, 1500));
    for (const l of done) {
      expect(l.retryAttempts).to.equal(1);
      expect(sentTo(r, l.messageId), l.id).to.have.length(2);
      expect((await attempts(c, sub.id, l.id)).map((a) => a.httpStatus)).to.deep.equal([500, 200]);
    }
  });

  it('a cancelled attempt aborts its request at once (not at the timeout) and is recorded', async () => {
    const { config, services } = await stack();
    config.webhookTimeoutSeconds = 30;
    const c = await newCustomer();
    const r = await receiver();
    r.fallback = { delayMs: 25000 };
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
    await createBeneficiary(c);
    await eventually(
      async () => r.received.length,
      (n) => n === 1,
    );
    const [logId] = await storedLogIds(sub.id);
    const cancelledAt = Date.now();
    await services.temporal.workflow.getHandle(`webhook-delivery-${logId}`).cancel();
    const [hit] = await eventually(
      async () => r.received,
      (rs) => rs[0].closedAt !== undefined,
      30000,
    );
    // Cancellation reaches the attempt with its next heartbeat (at most seconds), far before the 25 s answer.
    expect(hit.closedAt! - cancelledAt).to.be.below(8000);
    const [log] = await untilLogs(c, sub.id, (ls) => ls.length === 1);
    expect(log.status).to.equal('FAILED');
    expect(log.error).to.match(/^cancelled/);
    expect((await attempts(c, sub.id, logId)).map((a) => a.error)).to.deep.equal([log.error]);
  });

  it('the wait for a busy endpoint is bounded (FAILED ENDPOINT_BUSY, recoverable) and shown', async () => {
    const { config } = await stack();
    config.webhookTimeoutSeconds = 30;
    config.webhookMaxBusyWaitSeconds = 3;
    const c = await newCustomer();
    const r = await receiver();
    r.fallback = { delayMs: 20000 };
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
    for (let i = 0; i < 6; i++) await createBeneficiary(c);
    // Four in flight (WEBHOOK_ENDPOINT_CONCURRENCY), hanging; the other two wait, then give up.
    const busy = await untilLogs(
      c,
      sub.id,
      (ls) => ls.length === 2 && ls.every((l) => l.status === 'FAILED' && l.error === 'ENDPOINT_BUSY'),
      15000,
    );
    expect(r.received).to.have.length(4);
    expect(busy.map((l) => l.retryAttempts)).to.deep.equal([0, 0]);

    // A fast endpoint's short wait is recorded on the attempt that follows it.
    const quick = await receiver();
    quick.fallback = { delayMs: 1500 };
    const c2 = await newCustomer();
    const sub2 = await subscribe(c2, { url: quick.url, resources: BENEFICIARY_ONLY });
    for (let i = 0; i < 5; i++) await createBeneficiary(c2);
    const sent = await untilLogs(c2, sub2.id, (ls) => ls.length === 5 && ls.every((l) => l.status === 'SUCCESS'));
    const waited = await Promise.all(sent.map(async (l) => (await attempts(c2, sub2.id, l.id))[0].waitedMs));
    expect(Math.max(...waited)).to.be.above(0);
  });

  it('keeps the first 1 KiB of the answer and the duration; the attempts list follows list conventions', async () => {
    const { config } = await stack();
    const c = await newCustomer();
    const r = await receiver();
    r.script = [
      { status: 500, body: 'x'.repeat(3000) },
      { status: 503, body: 'busy', delayMs: 300 },
    ];
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY, allowRetry: true });
    expect(config.webhookRetryScheduleSeconds).to.have.length(2);
    await createBeneficiary(c);
    const [log] = await untilLogs(c, sub.id, (ls) => ls.length === 1 && ls[0].status === 'SUCCESS');
    expect(log.retryAttempts).to.equal(2);
    const all = await attempts(c, sub.id, log.id);
    expect(all.map((a) => [a.attempt, a.trigger, a.httpStatus])).to.deep.equal([
      [1, 'SCHEDULED', 500],
      [2, 'SCHEDULED', 503],
      [3, 'SCHEDULED', 200],
    ]);
    expect(all[0].responseBody).to.equal('x'.repeat(1024));
    expect(all[1]).to.include({ responseBody: 'busy', error: 'HTTP 503' });
    expect(all[1].durationMs).to.be.at.least(300);
    expect(all[2].responseBody).to.equal('ok');
    const { http } = await stack();
    const path = `/api/subscriptions/${sub.id}/executionLogs/${log.id}/attempts`;
    const first = await http.get(path).query({ limit: 2 }).set(c.auth);
    expect(first.body.meta.total).to.equal(3);
    // Newest first by default, as every list.
    expect(first.body.data.map((a: Attempt) => a.attempt)).to.deep.equal([3, 2]);
    const next = await http.get(path).query({ limit: 2, cursor: first.body.meta.nextCursor }).set(c.auth);
    expect(next.body.data.map((a: Attempt) => a.attempt)).to.deep.equal([1]);
    // Oldest first, one a page: each attempt once, then the end. Attempts are stamped by the database's clock,
    // so a cursor that lost the microseconds of its row would hand that row back again (decision 0203).
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await http
        .get(path)
        .query({ limit: 1, sortOrder: 'ASCENDING', ...(cursor ? { cursor } : {}) })
        .set(c.auth);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      seen.push(...res.body.data.map((a: Attempt) => a.attempt));
      cursor = res.body.meta.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(seen).to.deep.equal([1, 2, 3]);
  });

  it('a failed attempt whose bookkeeping has not committed is still in progress: 409, recover skips it', async () => {
    const { services, config } = await stack();
    const schedule = config.webhookRetryScheduleSeconds;
    config.webhookRetryScheduleSeconds = [1];
    const c = await newCustomer();
    const r = await receiver(500);
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY, allowRetry: true });
    // The worker loses its database right after the attempt's outcome is written: the statement that schedules
    // attempt 2 (and counts the failure) fails, and the activity retries it.
    const em = systemEm(services.orm);
    await em.execute(`create function test_settle_fails() returns trigger language plpgsql as $$
      begin raise exception 'the worker lost its database'; end $$`);
    await em.execute(`create trigger test_settle_fails before update on execution_logs for each row
      when (old.subscription_id = '${sub.id}' and new.health_attempt is distinct from old.health_attempt)
      execute function test_settle_fails()`);
    try {
      await createBeneficiary(c);
      const [log] = await untilLogs(c, sub.id, (ls) => ls.length === 1 && ls[0].status === 'FAILED');
      // Its workflow will retry: the delivery is in progress, whatever the log shows meanwhile.
      expect((await redeliver(c, sub.id, log.id)).body.code).to.equal('DELIVERY_IN_PROGRESS');
      expect((await recover(c, sub.id, { since: log.createdAt })).body).to.deep.equal({ count: 0 });
      r.fallback = { status: 200 };
    } finally {
      await em.execute('drop trigger test_settle_fails on execution_logs');
      await em.execute('drop function test_settle_fails()');
      config.webhookRetryScheduleSeconds = schedule;
    }
    const [done] = await untilLogs(c, sub.id, (ls) => ls[0].status === 'SUCCESS');
    await new Promise((res) => setTimeout(res, 1500));
    expect(done.retryAttempts).to.equal(1);
    expect(sentTo(r, done.messageId)).to.have.length(2);
    const listed = await attempts(c, sub.id, done.id);
    expect(listed.map((a) => [a.attempt, a.trigger, a.httpStatus])).to.deep.equal([
      [1, 'SCHEDULED', 500],
      [2, 'SCHEDULED', 200],
    ]);
  });

  it("recover's marker survives a stale retry of the attempt before it", async () => {
    const { services, config } = await stack();
    const c = await newCustomer();
    const r = await receiver(500);
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
    await createBeneficiary(c);
    const [log] = await untilLogs(c, sub.id, (ls) => ls.length === 1 && ls[0].status === 'FAILED');
    await withoutRelay(async () => {
      expect((await recover(c, sub.id, { since: log.createdAt })).body).to.deep.equal({ count: 1 });
      // Attempt 1's activity, retried late (its worker died after the POST), settles again with nothing to come.
      const em = systemEm(services.orm);
      const stale = { executionLogId: log.id, attempt: 1, sent: 'FAILED' as const, nextAttempt: null };
      await settleAttempt(em, { ...stale, disableAfterSeconds: config.webhookDisableAfterSeconds });
      // Attempt 2 is still queued: a second recover finds nothing to add.
      expect((await recover(c, sub.id, { since: log.createdAt })).body).to.deep.equal({ count: 0 });
      expect((await redeliver(c, sub.id, log.id)).body.code).to.equal('DELIVERY_IN_PROGRESS');
    });
    await untilLogs(c, sub.id, (ls) => ls[0].retryAttempts === 1);
    await new Promise((res) => setTimeout(res, 1000));
    expect(sentTo(r, log.messageId)).to.have.length(2);
  });

  // The retry of an attempt whose try Temporal stopped hearing from (a worker cut off from it, or stalled) while its
  // POST may still be open: the retry waits until that POST cannot be in flight before it sends the next attempt.
  /**
   * A subscription's delivery with no workflow to deliver it (the test plays the activity's retry itself), and its
   * attempt 1 begun by a try whose POST may still be open: it began 3 s short of the bound.
   */
  async function deliveryWithCutAttempt(c: TestCustomer, r: Receiver) {
    const { services, config } = await stack();
    const sub = await subscribe(c, { url: r.url, resources: BENEFICIARY_ONLY });
    const db = systemEm(services.orm);
    const logId = await withoutRelay(async () => {
      await createBeneficiary(c);
      const [id] = await eventually(
        () => storedLogIds(sub.id),
        (ids) => ids.length === 1,
      );
      await db.execute('delete from workflow_starts where workflow_id like ?', [`%${id}%`]);
      return id;
    });
    await db.execute(
      `insert into webhook_attempts (id, customer_id, execution_log_id, attempt, trigger, waited_ms, created_at)
       select gen_random_uuid(), customer_id, id, 1, 'SCHEDULED', 0, now() - make_interval(secs => ?)
       from execution_logs where id = ?`,
      [attemptMayBeOpenSeconds(config) - 3, logId],
    );
    return { sub, logId, activities: createWebhookActivities({ ...services, config }) };
  }

  it('a retry finding its attempt begun waits until that POST cannot be in flight, then sends the next', async () => {
    const c = await newCustomer('Cut Attempt Ltda');
    const r = await receiver();
    const { sub, logId, activities } = await deliveryWithCutAttempt(c, r);
    const started = Date.now();
    const result = await activities.attemptWebhookDelivery({ executionLogId: logId, attempt: 1, capped: true });
    expect(result).to.include({ delivered: true, attempt: 2 });
    expect(r.received, 'one POST, attempt 2').to.have.length(1);
    expect(r.received[0].at - started, 'sent once attempt 1 could no longer be open').to.be.at.least(2500);
    const listed = await attempts(c, sub.id, logId);
    expect(listed.map((a) => [a.attempt, a.httpStatus])).to.deep.equal([
      [1, 0],
      [2, 200],
    ]);
    expect(listed[0].error).to.match(/^interrupted/);
  });

  it('a subscription paused while the retry waits gets no POST: the delivery is read after the wait', async () => {
    const c = await newCustomer('Paused While Waiting Ltda');
    const r = await receiver();
    const { sub, logId, activities } = await deliveryWithCutAttempt(c, r);
    const retry = activities.attemptWebhookDelivery({ executionLogId: logId, attempt: 1, capped: true });
    const paused = await patchSub(c, sub.id, { status: 'DISABLED' });
    expect(paused.status, JSON.stringify(paused.body)).to.equal(200);
    expect(await retry).to.include({ delivered: false });
    expect(r.received, 'nothing sent to a paused subscription').to.have.length(0);
    const [log] = await logs(c, sub.id);
    expect(log).to.include({ status: 'FAILED', error: 'SUBSCRIPTION_DISABLED' });
  });
});
