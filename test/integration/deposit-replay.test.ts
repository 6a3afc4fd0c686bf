// Deposits took their payments through an update the workflow decides (workflows/operation.ts, patch
// `deposit-decides-inbound-payments`). Deposits started before that may wait up to the deposit and replay windows:
// their histories must replay on the new code, and new deposits must take the new path and replay too.
import { expect } from 'chai';
import { temporal as proto } from '@temporalio/proto';
import { historyFixture } from '../helpers/histories';
import { operationWorkflowId } from '../../workflows/ids';
import { activeAccount } from '../helpers/fixtures';
import { openDeposit, pay } from '../helpers/inbound-payments';
import { newCustomer, stack } from '../helpers/stack';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';

const EventType = proto.api.enums.v1.EventType;

describe('deposit histories across the inbound-payment update', function () {
  this.timeout(60000);

  it('replays a deposit recorded on the signal path (payment, failed reconciliation, replay, completed)', async () => {
    await stack(); // installs the SDK runtime with its quiet logger before the replay worker
    // Recorded with workflows/operation.ts as it was before the change, on a dev server, with stub activities.
    const history = historyFixture('deposit-signal-path.binpb');
    const types = (history.events ?? []).map((e) => e.eventType);
    expect(types.filter((t) => t === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).to.have.length(2);
    expect(types).to.not.include(EventType.EVENT_TYPE_MARKER_RECORDED);
    await replayOnCurrentCode(history, 'deposit-signal-path');
  });

  it('runs a new deposit, its payment a decision row named by a signal (patch markers), and replays it', async () => {
    const { services } = await stack();
    const c = await newCustomer('Replay Deposits Ltda');
    const account = await activeAccount(c, ['BRL']);
    const dep = await openDeposit(c, account.id, '10.00');
    expect((await pay(c, dep.id, '10.00')).body.status).to.equal('MATCHED');
    const handle = services.temporal.workflow.getHandle(operationWorkflowId(dep.id));
    expect(await handle.result()).to.equal('COMPLETED');
    const history = await handle.fetchHistory();
    const types = (history.events ?? []).map((e) => e.eventType);
    // Payments reach the deposit as decision rows (decision 0086): the decision signal, no update.
    expect(types).to.include(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    expect(types).to.not.include(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
    expect(types).to.include(EventType.EVENT_TYPE_MARKER_RECORDED);
    await replayOnCurrentCode(history, handle.workflowId);
  });
});
