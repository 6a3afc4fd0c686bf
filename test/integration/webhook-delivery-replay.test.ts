// The delivery attempt changed twice (webhooks/delivery-workflow.ts): from an ordinary activity on the main queue
// to a local activity, then to an ordinary activity on the webhook task queue. Deliveries started on either older
// path may still be waiting between retries for up to a day: their histories must replay on the current code
// without a nondeterminism error, and new deliveries must take the current path.
import fs from 'node:fs';
import { expect } from 'chai';
import { temporal as proto } from '@temporalio/proto';
import { historyFixture } from '../helpers/histories';
import { tenantEm } from '../../db/orm';
import { createBeneficiary } from '../../services/beneficiaries';
import { createSubscription } from '../../webhooks/subscriptions';
import { webhookDeliveryWorkflowId } from '../../workflows/ids';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { Receiver } from '../helpers/receiver';
import { newCustomer, stack, untilStarted } from '../helpers/stack';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';

const EventType = proto.api.enums.v1.EventType;
const typesOf = (history: proto.api.history.v1.IHistory) => (history.events ?? []).map((e) => e.eventType);

describe('webhook delivery histories across the attempt changes', function () {
  this.timeout(60000);

  it('replays a delivery recorded with the attempt as an ordinary activity (a 500, a timer, then a 200)', async () => {
    // Recorded with the workflow as it was before the local-activity change: a real run on the dev server.
    const history = historyFixture('webhook-delivery-as-activity.binpb');
    const types = typesOf(history);
    expect(types.filter((t) => t === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)).to.have.length(2);
    expect(types).to.include(EventType.EVENT_TYPE_TIMER_FIRED);
    await replayOnCurrentCode(history, 'webhook-delivery-recorded');
  });

  it('replays a delivery recorded with the attempt as a local activity (a 500, a timer, then a 200)', async () => {
    // Recorded with the workflow as it was before the webhook queue: a real run on the dev server.
    const history = historyFixture('webhook-delivery-as-local-activity.binpb');
    const types = typesOf(history);
    expect(types).to.not.include(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    // The patch marker and one marker per attempt.
    expect(types.filter((t) => t === EventType.EVENT_TYPE_MARKER_RECORDED)).to.have.length(3);
    expect(types).to.include(EventType.EVENT_TYPE_TIMER_FIRED);
    await replayOnCurrentCode(history, 'webhook-delivery-local-recorded');
  });

  it('replays a delivery recorded on the webhook queue (the current path, kept for the next change)', async () => {
    // Recorded by the next test (RECORD_HISTORY=<file>): one attempt as an ordinary activity, then done.
    const history = historyFixture('webhook-delivery-on-webhook-queue.binpb');
    expect(typesOf(history).filter((t) => t === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)).to.have.length(1);
    await replayOnCurrentCode(history, 'webhook-delivery-webhook-queue-recorded');
  });

  it('replays a delivery that waited for its busy endpoint before the wait was bounded', async () => {
    // Recorded before the bound: its attempt answered busy, the workflow slept, then the attempt was made. It has
    // no marker for the bound, so it keeps the unbounded wait and its activity input as they were.
    const history = historyFixture('webhook-delivery-busy-wait-unbounded.binpb');
    const types = typesOf(history);
    expect(types.filter((t) => t === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED).length).to.be.at.least(2);
    expect(types).to.include(EventType.EVENT_TYPE_TIMER_FIRED);
    await replayOnCurrentCode(history, 'webhook-delivery-busy-recorded');
  });

  it(
    'runs a new delivery on the webhook queue, the attempt as an ordinary ' + 'activity there, and replays it',
    async () => {
      const { services, config } = await stack();
      const receiver = await new Receiver().start();
      try {
        const c = await newCustomer('Replay Hooks Ltda');
        const em = () => tenantEm(services.orm, c.customerId);
        const sub = await createSubscription(services, em(), {
          url: receiver.url,
          resources: [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }],
        });
        await createBeneficiary(
          services,
          em(),
          beneficiaryBody(pixInstruction('EMAIL', 'replay@example.com')) as never,
        );
        const [row] = (await services.orm.em
          .fork()
          .getConnection()
          .execute('select id from execution_logs where subscription_id = ?', [sub.id])) as Array<{ id: string }>;
        const handle = services.temporal.workflow.getHandle(webhookDeliveryWorkflowId(row.id));
        const description = await untilStarted(handle);
        expect(description.taskQueue).to.equal(config.webhookTaskQueue);
        expect(await handle.result()).to.deep.equal({ delivered: true, attempts: 1 });
        const history = await handle.fetchHistory();
        const events = history.events ?? [];
        const scheduled = events.filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
        expect(scheduled).to.have.length(1);
        expect(scheduled[0].activityTaskScheduledEventAttributes?.taskQueue?.name).to.equal(config.webhookTaskQueue);
        expect(scheduled[0].activityTaskScheduledEventAttributes?.heartbeatTimeout?.seconds?.toString()).to.equal('5');
        // Only the patch markers (the webhook queue, the bounded busy wait): no local activity ran.
        const markers = (history.events ?? []).filter((e) => e.eventType === EventType.EVENT_TYPE_MARKER_RECORDED);
        expect(markers).to.have.length(2);
        expect(receiver.received).to.have.length(1);
        await replayOnCurrentCode(history, handle.workflowId);
        const record = process.env.RECORD_HISTORY; // re-records the fixture above
        if (record) fs.writeFileSync(record, proto.api.history.v1.History.encode(history).finish());
      } finally {
        await receiver.stop();
      }
    },
  );
});
