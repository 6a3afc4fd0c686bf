// The delivery attempt became a local activity (workflows/webhook-delivery.ts). Deliveries started before that
// change may still be waiting between retries for up to a day: their histories, with the attempt as an ordinary
// activity, must replay on the new code without a nondeterminism error, and new ones must take the local path.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { temporal as proto } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { tenantEm } from '../../db/orm';
import { createBeneficiary } from '../../api/services/beneficiaries';
import { createSubscription } from '../../api/services/subscriptions';
import { webhookDeliveryWorkflowId } from '../../workflows/ids';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { Receiver } from '../helpers/receiver';
import { newCustomer, stack, untilStarted } from '../helpers/stack';

const EventType = proto.api.enums.v1.EventType;
const workflowsPath = require.resolve('../../workflows');

describe('webhook delivery histories across the local-activity change', function () {
  this.timeout(60000);

  it('replays a delivery recorded with the attempt as an ordinary activity (a 500, a timer, then a 200)', async () => {
    // Recorded with the workflow as it was before the change: the history of a real run on the dev server.
    const bytes = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'histories', 'webhook-delivery-as-activity.binpb'));
    const history = proto.api.history.v1.History.decode(bytes);
    const types = (history.events ?? []).map((e) => e.eventType);
    expect(types.filter((t) => t === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)).to.have.length(2);
    expect(types).to.include(EventType.EVENT_TYPE_TIMER_FIRED);
    await Worker.runReplayHistory({ workflowsPath }, history, 'webhook-delivery-recorded');
  });

  it('runs a new delivery as a local activity, one workflow task, and replays it', async () => {
    const { services } = await stack();
    const receiver = await new Receiver().start();
    try {
      const c = await newCustomer('Replay Hooks Ltda');
      const em = () => tenantEm(services.orm, c.customerId);
      const sub = await createSubscription(services, em(), {
        url: receiver.url,
        resources: [{ name: 'BENEFICIARY', events: ['BENEFICIARY_PAYMENT_INSTRUCTION_CREATED'] }],
      });
      await createBeneficiary(services, em(), beneficiaryBody(pixInstruction('EMAIL', 'replay@example.com')) as never);
      const [row] = (await services.orm.em.fork().getConnection().execute('select id from execution_logs where subscription_id = ?', [sub.id])) as Array<{ id: string }>;
      const handle = services.temporal.workflow.getHandle(webhookDeliveryWorkflowId(row.id));
      await untilStarted(handle);
      expect(await handle.result()).to.deep.equal({ delivered: true, attempts: 1 });
      const history = await handle.fetchHistory();
      const types = (history.events ?? []).map((e) => e.eventType);
      expect(types).to.not.include(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
      expect(types.filter((t) => t === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)).to.have.length(1);
      expect(types.filter((t) => t === EventType.EVENT_TYPE_MARKER_RECORDED).length).to.be.at.least(1);
      expect(receiver.received).to.have.length(1);
      await Worker.runReplayHistory({ workflowsPath }, history, handle.workflowId);
    } finally {
      await receiver.stop();
    }
  });
});
