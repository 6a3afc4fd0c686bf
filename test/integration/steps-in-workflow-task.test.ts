// A withdrawal's and a deposit's own database steps run as local activities inside the workflow task (patches
// `withdrawal-database-steps-in-workflow-task` and `deposit-database-steps-in-workflow-task`, decision 0098), and
// so does a decision's read (`decisions-read-in-workflow-task`, decision 0151); only what leaves the worker is
// scheduled: the PSP's calls on the rails' queue. Operations recorded before, with every step a scheduled activity,
// must replay on this code, and new ones too.
import { expect } from 'chai';
import { historyFixture, localActivities, scheduledActivities } from '../helpers/histories';
import { withdrawToNewKey } from '../helpers/beneficiary-fixtures';
import { activeAccount } from '../helpers/fixtures';
import { fund, untilStatus } from '../helpers/money';
import { openDeposit, pay } from '../helpers/inbound-payments';
import { eventually, newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { tenantEm } from '../../db/orm';
import { replayDeposit } from '../../services/operations/signals';
import { payoutIdFor } from '../../rails/pix/ids';
import { operationWorkflowId } from '../../workflows/ids';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';

/** The id of a new withdrawal of 10.00 BRL to a new beneficiary's key. */
async function withdrawn(c: TestCustomer, accountId: string, dictKey: string): Promise<string> {
  const res = await withdrawToNewKey(c, accountId, dictKey, '10.00');
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.id;
}

describe('database steps inside the workflow task: histories before and after', function () {
  this.timeout(120_000);

  for (const [name, steps] of [
    ['withdrawal-pix-db-steps-as-activities.binpb', ['setOperationStatus', 'payoutOrder', 'recordPayout']],
    ['withdrawal-pix-pending-db-steps-as-activities.binpb', ['setOperationStatus', 'payoutOrder', 'recordPayout']],
    ['deposit-paid-steps-as-activities.binpb', ['decideInboundPayment', 'reconcileDeposit', 'closeDeposit']],
    [
      'deposit-topped-up-replayed-steps-as-activities.binpb',
      ['decideInboundPayment', 'reconcileDeposit', 'closeDeposit'],
    ],
  ] as const) {
    it(`replays ${name}, recorded with every database step a scheduled activity`, async () => {
      await stack(); // installs the SDK runtime with its quiet logger before the replay worker
      const history = historyFixture(name);
      expect(scheduledActivities(history)).to.include.members([...steps]);
      await replayOnCurrentCode(history, name);
    });
  }

  // Recorded on 7c0b72a: each payment decided and reconciled in a local activity of its own, then a close.
  for (const name of ['deposit-paid-steps-in-task.binpb', 'deposit-topped-up-replayed-steps-in-task.binpb']) {
    it(`replays ${name}, recorded with a payment's decision, reconciliation and close as three steps`, async () => {
      await stack();
      const history = historyFixture(name);
      expect(localActivities(history)).to.include.members(['decideInboundPayment', 'reconcileDeposit', 'closeDeposit']);
      await replayOnCurrentCode(history, name);
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
      const calls = scheduledActivities(history);
      // The generic rail activities since decision 0118 (pixSendPayout and pixFollowPayout before).
      expect(calls[0], JSON.stringify(calls)).to.equal('railSendPayout');
      // Reads of a payout sent: railFollowPayout (pixFollowPayout since decision 0108, pixPayoutStatus before).
      expect(
        calls.slice(1).every((t) => t === 'railFollowPayout'),
        JSON.stringify(calls),
      ).to.equal(true);
      await replayOnCurrentCode(history, id);
    }
  });

  it('schedules nothing for a new deposit, paid at once or topped up and replayed', async () => {
    const { services } = await stack();
    const c = await newCustomer('Deposit Histories Ltda');
    const accountId = (await activeAccount(c, ['BRL'])).id;
    const paid = await openDeposit(c, accountId, '20.00');
    expect((await pay(c, paid.id, '20.00')).body.status).to.equal('MATCHED');
    const short = await openDeposit(c, accountId, '100.00');
    await pay(c, short.id, '60.00');
    await untilStatus(c, short.id, 'FAILED');
    await pay(c, short.id, '70.00');
    await replayDeposit(services, tenantEm(services.orm, c.customerId), short.id, 'operator:test');
    for (const id of [paid.id, short.id]) {
      await untilStatus(c, id, 'COMPLETED');
      const handle = services.temporal.workflow.getHandle(operationWorkflowId(id));
      await handle.result();
      const history = await handle.fetchHistory();
      // Each payment's decision is read, decided and reconciled inside the workflow task its signal started: the
      // decision and the reconciliation as one step, and no close after the step that completed it (decision 0157).
      expect(scheduledActivities(history)).to.deep.equal([]);
      const steps = localActivities(history);
      if (id === paid.id) expect(steps).to.deep.equal(['readDecision', 'takeInboundPayment']);
      // The short one: 60.00 taken and reconciled (FAILED), 70.00 taken while FAILED, the replay's reconciliation.
      else
        expect(steps.filter((t) => t !== 'readDecision')).to.deep.equal([
          'takeInboundPayment',
          'takeInboundPayment',
          'reconcileDeposit',
        ]);
      await replayOnCurrentCode(history, id);
    }
  });
});
