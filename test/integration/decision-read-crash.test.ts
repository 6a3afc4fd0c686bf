// A worker killed inside the workflow task that reads a deposit's payment decision (decision 0151: the read is a
// local activity of that task). Nothing of the task reached the history, so it times out and another worker runs it
// again: the decision is read again, and the deposit is decided and credited once.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { temporal as proto } from '@temporalio/proto';
import { systemEm, tenantEm } from '../../db/orm';
import { openDeposit } from '../../services/operations/deposit';
import { recordInboundPayment } from '../../services/reported-payments';
import { operationWorkflowId } from '../../workflows/ids';
import { activeAccount } from '../helpers/fixtures';
import { scheduledActivities } from '../helpers/histories';
import { balance, getOp, quote, untilStatus } from '../helpers/money';
import { paymentsOf } from '../helpers/inbound-payments';
import { exitWithin, killAll, spawnWorker } from '../helpers/processes';
import { newCustomer, stack } from '../helpers/stack';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';

const EventType = proto.api.enums.v1.EventType;

describe('a worker killed while it reads a decision', function () {
  this.timeout(120_000);
  after(killAll);

  it('leaves the deposit waiting, and the next worker credits it once', async () => {
    const { services, config } = await stack();
    // Its own task queue: only the workers of this test run the deposit's workflow.
    const queue = `decision-read-crash-${randomUUID()}`;
    const c = await newCustomer('Decision Read Crash Ltda');
    const accountId = (await activeAccount(c, ['BRL'])).id;
    const em = () => tenantEm(services.orm, c.customerId);
    const dying = await spawnWorker('worker-dies-reading', queue, {
      env: { CAMBIO_TEST_CRASH_AT: 'after-decision-read' },
    });

    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '12.34' });
    const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' as const } };
    const dep = await openDeposit({ ...services, config: { ...config, taskQueue: queue } }, em(), body, randomUUID());
    const endToEndId = `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;
    // Recorded with its decision; the dying worker's relay sends the signal, and its task reads the decision.
    await recordInboundPayment(
      em(),
      dep.id,
      { amount: { value: '12.34', asset: 'BRL' }, endToEndId },
      { via: { taskQueue: queue, actor: 'operator:test' } },
    );
    await exitWithin(dying, 30_000);

    // Killed after the read: nothing was decided or credited.
    expect((await getOp(c, dep.id)).currentState.status).to.equal('REQUESTED');
    expect((await paymentsOf(c, `operationId[eq]=${dep.id}`)).map((p) => p.status)).to.deep.equal(['RECEIVED']);
    expect((await balance(c, accountId, 'BRL')).available).to.equal('0.00');

    await spawnWorker('worker-after', queue);
    await untilStatus(c, dep.id, 'COMPLETED', 60_000);
    expect((await paymentsOf(c, `operationId[eq]=${dep.id}`)).map((p) => p.status)).to.deep.equal(['MATCHED']);
    expect((await balance(c, accountId, 'BRL')).available).to.equal('12.34');
    const settled = await systemEm(services.orm).execute(
      `select count(*)::int as n from ledger_transactions where operation_id = ? and key like '%:settle'`,
      [dep.id],
    );
    expect(settled[0].n, 'one settlement').to.equal(1);

    // The killed task left no trace but its timeout; the history the next worker wrote replays.
    const handle = services.temporal.workflow.getHandle(operationWorkflowId(dep.id));
    await handle.result();
    const history = await handle.fetchHistory();
    const types = (history.events ?? []).map((e) => e.eventType);
    expect(types).to.include(EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT);
    expect(scheduledActivities(history)).to.deep.equal([]);
    await replayOnCurrentCode(history, dep.id);
  });
});
