// Decisions became rows read by the workflow (workflows/decision.ts, patches `*-decisions-are-rows`). Reviews,
// held withdrawals and failed deposits started before that take their decisions as raw signals: their histories,
// recorded on the code before the change, must replay on the new code; new ones must replay too. Later the read
// itself moved into the workflow task (patch `decisions-read-in-workflow-task`, decision 0151): histories that
// scheduled it replay too.
import { expect } from 'chai';
import { temporal as proto } from '@temporalio/proto';
import { historyFixture, scheduledActivities } from '../helpers/histories';
import { activeAccount } from '../helpers/fixtures';
import { approvedInstruction } from '../helpers/beneficiary-fixtures';
import { newCustomer, stack } from '../helpers/stack';
import { openDeposit, pay } from '../helpers/inbound-payments';
import { operationWorkflowId } from '../../workflows/ids';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';

const EventType = proto.api.enums.v1.EventType;

describe('decision histories across decisions-as-rows', function () {
  this.timeout(60000);

  for (const name of [
    'account-review-signal-decision.binpb',
    'instruction-review-signal-decision.binpb',
    'withdrawal-hold-signal-decision.binpb',
    'deposit-replay-signal.binpb',
  ]) {
    it(`replays ${name}, recorded with a raw decision signal`, async () => {
      await stack(); // installs the SDK runtime with its quiet logger before the replay worker
      const history = historyFixture(name);
      const types = (history.events ?? []).map((e) => e.eventType);
      expect(types).to.include(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
      expect(types).to.include(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
      await replayOnCurrentCode(history, name);
    });
  }

  for (const name of [
    'account-review-decision-read-scheduled.binpb',
    'instruction-review-decision-read-scheduled.binpb',
    'deposit-paid-decision-read-scheduled.binpb',
    'deposit-topped-up-replayed-decision-read-scheduled.binpb',
    'withdrawal-hold-decision-read-scheduled.binpb',
  ]) {
    it(`replays ${name}, recorded with each decision read by a scheduled activity`, async () => {
      await stack();
      const history = historyFixture(name);
      expect(scheduledActivities(history)).to.include('readDecision');
      await replayOnCurrentCode(history, name);
    });
  }

  it('replays deposit-payment-update.binpb, a deposit whose payments were decided by the update', async () => {
    await stack();
    const history = historyFixture('deposit-payment-update.binpb');
    const types = (history.events ?? []).map((e) => e.eventType);
    expect(types).to.include(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
    expect(types).to.include(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    await replayOnCurrentCode(history, 'deposit-payment-update');
  });

  it('replays new reviews, decided through recorded rows', async () => {
    const { services } = await stack();
    const c = await newCustomer('Decision Histories Ltda');
    const account = await activeAccount(c, ['BRL']);
    const { instructionId } = await approvedInstruction(c, { dictKeyType: 'EMAIL', dictKey: 'h@example.com' });
    // A deposit paid since payments are decision rows: the payment reached it by the decision signal.
    const dep = await openDeposit(c, account.id, '3.00');
    expect((await pay(c, dep.id, '3.00')).body.status).to.equal('MATCHED');
    const deposit = operationWorkflowId(dep.id);
    for (const workflowId of [`account-review-${account.id}-1`, `instruction-review-${instructionId}`, deposit]) {
      const handle = services.temporal.workflow.getHandle(workflowId);
      await handle.result();
      const history = await handle.fetchHistory();
      const types = (history.events ?? []).map((e) => e.eventType);
      expect(types, 'the patch marker').to.include(EventType.EVENT_TYPE_MARKER_RECORDED);
      // The decision was read inside the workflow task that took its signal.
      expect(scheduledActivities(history)).not.to.include('readDecision');
      await replayOnCurrentCode(history, workflowId);
    }
  });
});
