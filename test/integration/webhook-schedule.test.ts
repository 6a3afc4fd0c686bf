// The full retry schedule on a time-skipping Temporal test server: 8 attempts over about 27.6 h with the
// configured delays between them, the log FAILED after the last; a longer Retry-After on a 429 is honoured.
// Postgres and the receiver are real; only Temporal's clock is virtual.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { temporal as proto } from '@temporalio/proto';
import { tenantEm } from '../../db/orm';
import type { ServiceContext } from '../../services/context';
import { createBeneficiary } from '../../services/beneficiaries';
import { createSubscription } from '../../webhooks/subscriptions';
import { listExecutionLogs } from '../../webhooks/execution-logs';
import { webhookDeliveryWorkflowId } from '../../workflows/ids';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { Receiver } from '../helpers/receiver';
import { eventually, newCustomer, stack, TestCustomer, untilStarted } from '../helpers/stack';
import { startTimeSkipping, TimeSkipping } from '../helpers/time-skipping';

const DEFAULT_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

describe('webhook retry schedule (time skipping)', () => {
  let skipping: TimeSkipping;
  let ctx: ServiceContext;
  let c: TestCustomer;
  let receiver: Receiver;
  const taskQueue = `cambio-webhook-timers-${randomUUID()}`;

  before(async function () {
    this.timeout(120000);
    skipping = await startTimeSkipping(this, 'webhook schedule');
    const { services, config } = await stack();
    // The production schedule and timeout, whatever the test stack configures.
    ctx = {
      ...services,
      temporal: skipping.env.client,
      config: {
        ...config,
        taskQueue,
        webhookTaskQueue: `${taskQueue}-webhooks`,
        webhookRetryScheduleSeconds: DEFAULT_SCHEDULE,
        webhookTimeoutSeconds: 10,
      },
    };
    receiver = await new Receiver().start();
  });

  after(async () => {
    await receiver?.stop();
    await skipping?.env.teardown();
  });

  /** Runs `fn` while a worker on the test server serves this file's task queue. */
  const withWorker = <T>(fn: () => Promise<T>): Promise<T> => skipping.withWorker(ctx, fn);

  const em = () => tenantEm(ctx.orm, c.customerId);

  /** A fresh customer subscribes and causes one event; returns the delivery's workflow id and its subscription. */
  async function deliverOne(key: string) {
    c = await newCustomer('Schedule Ltda');
    const sub = await createSubscription(ctx, em(), {
      url: receiver.url,
      resources: [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }],
      allowRetry: true,
    });
    await createBeneficiary(ctx, em(), beneficiaryBody(pixInstruction('EMAIL', key)) as never);
    const [row] = (await ctx.orm.em
      .fork()
      .getConnection()
      .execute('select id from execution_logs where subscription_id = ?', [sub.id])) as Array<{ id: string }>;
    const workflowId = webhookDeliveryWorkflowId(row.id);
    await untilStarted(skipping.env.client.workflow.getHandle(workflowId));
    return { sub, workflowId };
  }

  async function timerDelays(workflowId: string): Promise<number[]> {
    const history = await skipping.env.client.workflow.getHandle(workflowId).fetchHistory();
    return (history.events ?? [])
      .filter((e) => e.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_TIMER_STARTED)
      .map((e) => Number(e.timerStartedEventAttributes!.startToFireTimeout!.seconds));
  }

  it('makes 8 attempts over about 27.6 h with the configured delays, then leaves the log FAILED', async function () {
    this.timeout(120000);
    receiver.received.length = 0;
    receiver.script = [];
    receiver.fallback = { status: 500 };
    await withWorker(async () => {
      const { sub, workflowId } = await deliverOne('schedule@example.com');
      const result = await skipping.env.client.workflow.getHandle(workflowId).result();
      expect(result).to.deep.equal({ delivered: false, attempts: 8 });
      const events = (await skipping.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const seconds = (e: (typeof events)[number]) => Number(e.eventTime!.seconds);
      const elapsedHours = (seconds(events[events.length - 1]) - seconds(events[0])) / 3600;
      expect(elapsedHours).to.be.within(27.5, 27.7);
      expect(await timerDelays(workflowId)).to.deep.equal(DEFAULT_SCHEDULE);
      expect(receiver.received).to.have.length(8);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).to.equal(1);
      const logs = await listExecutionLogs(
        em(),
        sub.id,
        { limit: 10, direction: 'NEXT', sortOrder: 'DESCENDING' },
        ctx.config.cursorSecret,
      );
      expect(logs.data).to.have.length(1);
      expect(logs.data[0]).to.include({ status: 'FAILED', httpStatus: 500, retryAttempts: 7 });
    });
  });

  it('honours a Retry-After on 429 that is longer than the next delay, and stops at the first 2xx', async function () {
    this.timeout(120000);
    receiver.received.length = 0;
    receiver.script = [
      { status: 429, headers: { 'retry-after': '600' } },
      { status: 503, headers: { 'retry-after': '1' } },
    ];
    receiver.fallback = { status: 204 };
    await withWorker(async () => {
      const { sub, workflowId } = await deliverOne('retry-after@example.com');
      expect(await skipping.env.client.workflow.getHandle(workflowId).result()).to.deep.equal({
        delivered: true,
        attempts: 3,
      });
      // 600 s asked for instead of 5; then a shorter Retry-After does not cut the 300 s delay.
      expect(await timerDelays(workflowId)).to.deep.equal([600, 300]);
      const logs = await eventually(
        () =>
          listExecutionLogs(
            em(),
            sub.id,
            { limit: 10, direction: 'NEXT', sortOrder: 'DESCENDING' },
            ctx.config.cursorSecret,
          ),
        (l) => l.data.length === 1,
      );
      expect(logs.data[0]).to.include({ status: 'SUCCESS', httpStatus: 204, retryAttempts: 2 });
    });
  });
});
