// A withdrawal's own database steps run as local activities inside its workflow task (patch
// `withdrawal-database-steps-in-workflow-task`, decision 0098); only the PSP's calls are scheduled, on the rails'
// queue. Withdrawals recorded before, with every step a scheduled activity, must replay on this code, and new ones
// too.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { temporal as proto } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { withdrawToNewKey } from '../helpers/beneficiary-fixtures';
import { activeAccount } from '../helpers/fixtures';
import { fund, untilStatus } from '../helpers/money';
import { eventually, newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { payoutIdFor } from '../../rails/pix/ids';
import { operationWorkflowId } from '../../workflows/ids';

const EventType = proto.api.enums.v1.EventType;
const workflowsPath = require.resolve('../../workflows');

const fixture = (name: string) =>
  proto.api.history.v1.History.decode(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'histories', name)));

/** The activity types a history scheduled, in order. */
const scheduled = (history: proto.api.history.v1.IHistory) =>
  (history.events ?? [])
    .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);

/** The id of a new withdrawal of 10.00 BRL to a new beneficiary's key. */
async function withdrawn(c: TestCustomer, accountId: string, dictKey: string): Promise<string> {
  const res = await withdrawToNewKey(c, accountId, dictKey, '10.00');
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.id;
}

describe('withdrawal histories across database steps in the workflow task', function () {
  this.timeout(120_000);

  for (const name of [
    'withdrawal-pix-db-steps-as-activities.binpb',
    'withdrawal-pix-pending-db-steps-as-activities.binpb',
  ]) {
    it(`replays ${name}, recorded with every database step a scheduled activity`, async () => {
      await stack(); // installs the SDK runtime with its quiet logger before the replay worker
      const history = fixture(name);
      expect(scheduled(history)).to.include.members(['setOperationStatus', 'payoutOrder', 'recordPayout']);
      await Worker.runReplayHistory({ workflowsPath }, history, name);
    });
  }

  it('schedules only the PSP calls for a new withdrawal, paid at once or after a wait, and replays it', async () => {
    const { services, psp } = await stack();
    const c = await newCustomer('Withdrawal Histories Ltda');
    const accountId = (await activeAccount(c, ['BRL'])).id;
    await fund(c, accountId, 'BRL', '100.00');
    const paid = await withdrawn(c, accountId, 'history-paid@example.com');
    await psp.control('POST', '/payout-rules', { chave: 'history-pending@example.com', status: 'EM_PROCESSAMENTO' });
    const pending = await withdrawn(c, accountId, 'history-pending@example.com');
    const idEnvio = payoutIdFor(pending);
    await eventually(
      async () => (await psp.control('GET', '/state')).body.payouts as Record<string, { idEnvio: string }>,
      (payouts) => Object.values(payouts).some((p) => p.idEnvio === idEnvio),
      20_000,
    );
    // Long enough for a status read or two to find it still pending.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await psp.control('POST', `/payouts/${idEnvio}/settle`, { status: 'REALIZADO' })).status).to.equal(204);
    for (const id of [paid, pending]) {
      await untilStatus(c, id, 'COMPLETED', 60_000);
      const handle = services.temporal.workflow.getHandle(operationWorkflowId(id));
      await handle.result();
      const history = await handle.fetchHistory();
      const calls = scheduled(history);
      expect(calls[0], JSON.stringify(calls)).to.equal('pixSendPayout');
      expect(new Set(calls.slice(1)), JSON.stringify(calls)).to.satisfy((rest: Set<string>) =>
        [...rest].every((t) => t === 'pixPayoutStatus'),
      );
      await Worker.runReplayHistory({ workflowsPath }, history, id);
    }
  });
});
