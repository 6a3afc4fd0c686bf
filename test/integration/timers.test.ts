// The deposit's timers on a time-skipping Temporal test server: the 24 h deposit window expires an unpaid
// deposit, a failed reconciliation stays replayable for 7 days, and after that a replay is refused.
// Postgres is the real shared one; only Temporal's clock is virtual.
import { randomUUID } from 'node:crypto';
import { presentOperation } from '../../presenters/operation';
import { expect } from 'chai';
import Decimal from 'decimal.js';
import { systemEm, tenantEm } from '../../db/orm';
import { CambioError } from '../../domain/errors';
import type { ServiceContext } from '../../services/context';
import { openDeposit as openDepositWithCharge } from '../../services/operations/deposit';
import { replayDeposit } from '../../services/operations/signals';
import { reportInboundPayment } from '../../services/reported-payments';
import { operationWorkflowId } from '../../workflows/ids';
import { activeAccount } from '../helpers/fixtures';
import { balance, getOp, quote } from '../helpers/money';
import { eventually, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { startTimeSkipping, TimeSkipping } from '../helpers/time-skipping';

const e2e = () => `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;

const DAY = 86400;

describe('deposit timers (time skipping)', () => {
  let skipping: TimeSkipping;
  let ctx: ServiceContext;
  let c: TestCustomer;
  let accountId: string;
  const taskQueue = `cambio-timers-${randomUUID()}`;

  before(async function () {
    this.timeout(120000);
    skipping = await startTimeSkipping(this, 'deposit timers');
    const { services, config } = await stack();
    // The windows the spec names, whatever the environment configures.
    ctx = {
      ...services,
      temporal: skipping.env.client,
      config: {
        ...config,
        taskQueue,
        webhookTaskQueue: `${taskQueue}-webhooks`,
        depositWindowSeconds: DAY,
        replayWindowSeconds: 7 * DAY,
      },
    };
    c = await newCustomer('Timers Ltda');
    accountId = (await activeAccount(c, ['BRL'])).id;
  });

  after(async () => {
    await skipping?.env.teardown();
  });

  /** Runs `fn` while a worker on the test server serves this file's task queue. */
  const withWorker = <T>(fn: () => Promise<T>): Promise<T> => skipping.withWorker(ctx, fn);

  const em = () => tenantEm(ctx.orm, c.customerId);
  /** A TED of `value` reais for the deposit, as an operator records it from the bank statement (`deposit pay`). */
  const reportTed = (operationId: string, value: string) =>
    reportInboundPayment(
      ctx,
      em(),
      operationId,
      { amount: { value, asset: 'BRL' }, endToEndId: e2e() },
      'operator:timers-test',
    );
  const workflow = (operationId: string) =>
    skipping.env.client.workflow.getHandle<() => Promise<string>>(operationWorkflowId(operationId));
  const statuses = (op: { states: Array<{ status: string }> }) => op.states.map((s) => s.status);
  const count = async (query: string, params: unknown[]) =>
    Number(((await systemEm(ctx.orm).execute(query, params)) as Array<{ n: string }>)[0].n);

  /**
   * A BRL deposit of `value` by TED, its workflow started on the test server: its payments are reported as an operator
   * records a TED from the bank statement (`deposit pay` refuses a rail whose provider records its own, decision 0340).
   */
  async function openDeposit(value: string) {
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
    const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'TED' as const } };
    const dep = presentOperation(await openDepositWithCharge(ctx, em(), body, randomUUID()));
    expect(dep.currentState.status).to.equal('REQUESTED');
    // The commit wakes this queue's relay (withWorker), which starts the workflow on the test server.
    await eventually(
      () => count('select count(*) as n from workflow_starts where workflow_id = ?', [operationWorkflowId(dep.id)]),
      (n) => n === 0,
      5000,
      20,
    );
    return dep;
  }

  it('expires an unpaid deposit after the 24 h window: FAILED with DEPOSIT_EXPIRED and its event', async () => {
    const before = await balance(c, accountId, 'BRL');
    await withWorker(async () => {
      const dep = await openDeposit('100.00');
      await skipping.env.sleep('23 hours');
      expect((await getOp(c, dep.id)).currentState.status, 'still open an hour before the window closes').to.equal(
        'REQUESTED',
      );

      expect(await workflow(dep.id).result()).to.equal('FAILED');
      const op = await getOp(c, dep.id);
      expect(statuses(op)).to.deep.equal(['REQUESTED', 'FAILED']);
      expect(op.currentState.reason.code).to.equal('DEPOSIT_EXPIRED');
      expect(
        await count(`select count(*) as n from events where resource_id = ? and type = 'OPERATION_FAILED'`, [dep.id]),
      ).to.equal(1);
      expect(await count(`select count(*) as n from ledger_transactions where operation_id = ?`, [dep.id])).to.equal(0);

      // A payment arriving after expiry is kept, UNMATCHED, in the customer's suspense: nothing credits it.
      const late = await reportTed(dep.id, '100.00');
      expect(late).to.deep.include({ status: 'UNMATCHED', operationId: dep.id, accountId });
      expect(
        await count(`select count(*) as n from inbound_payments where operation_id = ? and status = 'UNMATCHED'`, [
          dep.id,
        ]),
      ).to.equal(1);
      expect((await getOp(c, dep.id)).currentState.status).to.equal('FAILED');
    });
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });

  it('counts the 7-day replay window from the failure: a replay that fails again does not extend it', async () => {
    const before = await balance(c, accountId, 'BRL');
    await withWorker(async () => {
      const dep = await openDeposit('100.00');
      const short = await reportTed(dep.id, '60.00');
      expect(short.status).to.equal('MATCHED');
      expect((await getOp(c, dep.id)).currentState.status).to.equal('FAILED');
      const failedAt = await skipping.env.currentTimeMs();

      // Six days on, a replay with nothing more paid fails again.
      await skipping.env.sleep('6 days');
      const again = presentOperation(await replayDeposit(ctx, em(), dep.id, 'operator:test'));
      expect(again.currentState.status).to.equal('FAILED');

      // The window still ends 7 days after the failure (the old code closed it 13 days after).
      expect(await workflow(dep.id).result()).to.equal('FAILED');
      const closedAfter = (await skipping.env.currentTimeMs()) - failedAt;
      expect(closedAfter).to.be.at.least(7 * DAY * 1000 - 60_000);
      expect(closedAfter).to.be.below(7 * DAY * 1000 + 3_600_000);
      const refused = await replayDeposit(ctx, em(), dep.id, 'operator:test').catch((e: unknown) => e);
      expect(refused).to.have.property('code', 'INVALID_STATE');
    });
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });

  it(
    'keeps a short-paid deposit replayable: 3 days later a top-up and a ' + 'replay complete it, credited once',
    async () => {
      const before = await balance(c, accountId, 'BRL');
      await withWorker(async () => {
        const dep = await openDeposit('100.00');
        const short = await reportTed(dep.id, '60.00');
        expect(short.status).to.equal('MATCHED');
        const failed = await getOp(c, dep.id);
        expect(failed.currentState.status).to.equal('FAILED');
        expect(failed.currentState.reason?.code).to.equal('AMOUNT_MISMATCH');

        await skipping.env.sleep('3 days');
        expect((await getOp(c, dep.id)).currentState.status).to.equal('FAILED');
        expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);

        // Recorded after the failure, the top-up waits for an operator's replay.
        const topUp = await reportTed(dep.id, '40.00');
        expect(topUp.status).to.equal('MATCHED');
        expect((await getOp(c, dep.id)).currentState.status).to.equal('FAILED');
        const replayed = presentOperation(await replayDeposit(ctx, em(), dep.id, 'operator:test'));
        expect(replayed.currentState.status).to.equal('COMPLETED');
        expect(statuses(replayed)).to.deep.equal(['REQUESTED', 'FAILED', 'PROCESSING', 'COMPLETED']);
        expect(replayed.transactions.map((t: { amount: { value: string } }) => t.amount.value)).to.deep.equal([
          '60.00',
          '40.00',
        ]);
        expect(await workflow(dep.id).result()).to.equal('COMPLETED');
        expect(
          await count(`select count(*) as n from ledger_transactions where key = ?`, [`${dep.id}:settle`]),
        ).to.equal(1);
        expect(
          await count(`select count(*) as n from events where resource_id = ? and type = 'OPERATION_COMPLETED'`, [
            dep.id,
          ]),
        ).to.equal(1);
      });
      expect(await balance(c, accountId, 'BRL')).to.deep.include({
        available: new Decimal(before.available).plus('100.00').toFixed(2),
        held: before.held,
      });
    },
  );

  it('refuses a replay once the 7-day replay window has passed', async () => {
    const before = await balance(c, accountId, 'BRL');
    await withWorker(async () => {
      const dep = await openDeposit('100.00');
      await reportTed(dep.id, '60.00');
      await reportTed(dep.id, '40.00');
      const start = await skipping.env.currentTimeMs();
      // The workflow closes when the replay window's timer fires.
      expect(await workflow(dep.id).result()).to.equal('FAILED');
      expect((await skipping.env.currentTimeMs()) - start).to.be.at.least(7 * DAY * 1000 - 60_000);

      const refused = await replayDeposit(ctx, em(), dep.id, 'operator:test').catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(CambioError);
      expect(refused).to.have.property('code', 'INVALID_STATE');
      // The window closed: what counted toward the deposit is unmatched now, and so is a payment arriving later.
      const late = await reportTed(dep.id, '1.00');
      expect(late.status).to.equal('UNMATCHED');
      expect(
        await count(`select count(*) as n from inbound_payments where operation_id = ? and status = 'UNMATCHED'`, [
          dep.id,
        ]),
      ).to.equal(3);
      const op = await getOp(c, dep.id);
      expect(statuses(op)).to.deep.equal(['REQUESTED', 'FAILED']);
      expect(op.currentState.reason.code).to.equal('AMOUNT_MISMATCH');
      expect(await count(`select count(*) as n from ledger_transactions where operation_id = ?`, [dep.id])).to.equal(0);
    });
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });
});
