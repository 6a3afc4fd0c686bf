// Inbound payments as first-class records (decisions 0045, 0076): every payment a rail reports is
// kept once per end-to-end id and ends matched to its deposit or unmatched in the customer's suspense.
import { expect } from 'chai';
import { presentOperation } from '../../presenters/operation';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { systemEm, tenantEm } from '../../db/orm';
import { replayDeposit } from '../../services/operations/signals';
import { recordInboundPayment } from '../../services/reported-payments';
import { sweepReceivedPayments } from '../../payments/inbound-payment-sweep';
import { decideInboundPayment } from '../../payments/record-and-decide';
import { recordPayment } from '../../db/repositories/inbound-payments';
import { Dec } from '../../domain/money';
import { operationWorkflowId } from '../../workflows/ids';
import { ignoredSignalsQuery } from '../../workflows/decision';
import { sendDecisionNow } from '../../workflows/send-signal';
import { addDecision } from '../../db/repositories/workflow-decisions';
import { inTransaction } from '../../db/transaction';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, getOp, untilStatus } from '../helpers/money';
import { eventually, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { openDeposit, pay, paymentsOf, PaymentView, spiEndToEndId as e2e } from '../helpers/inbound-payments';

describe('inbound payments', function () {
  this.timeout(120000);
  let c: TestCustomer;
  let accountId: string;

  before(async () => {
    c = await newCustomer('Payer Ltda');
    accountId = (await activeAccount(c, ['BRL'])).id;
  });

  it('a deposit paid twice completes once: the second payment is UNMATCHED in suspense, not lost', async () => {
    const before = await balance(c, accountId, 'BRL');
    const dep = await openDeposit(c, accountId, '100.00');
    const first = await pay(c, dep.id, '100.00', { endToEndId: e2e() });
    const second = await pay(c, dep.id, '100.00', { endToEndId: e2e() });
    expect([first.status, second.status]).to.deep.equal([200, 200]);
    expect(first.body).to.deep.include({ status: 'MATCHED', operationId: dep.id, accountId, rail: 'PIX_KEY' });
    expect(first.body.customerId).to.equal(c.customerId);
    expect(first.body.amount).to.deep.equal({ value: '100.00', asset: 'BRL', decimals: 2 });
    expect(second.body).to.deep.include({ status: 'UNMATCHED', operationId: dep.id });
    const op = await untilStatus(c, dep.id, 'COMPLETED');
    const credits = op.transactions.map((t: { id: string; amount: { value: string } }) => [t.id, t.amount.value]);
    expect(credits).to.deep.equal([[first.body.id, '100.00']]);
    expect((await balance(c, accountId, 'BRL')).available).to.equal(new Decimal(before.available).plus(100).toFixed(2));
    const unmatched = await paymentsOf(c, `operationId[eq]=${dep.id};status[eq]=UNMATCHED`);
    expect(unmatched.map((p) => p.id)).to.deep.equal([second.body.id]);
    await assertLedgerBalanced();
  });

  it('an overpayment completes with the quoted amount; the excess is split off as an UNMATCHED remainder', async () => {
    const dep = await openDeposit(c, accountId, '100.00');
    const paid = await pay(c, dep.id, '150.00');
    expect(paid.status).to.equal(200);
    expect(paid.body.status).to.equal('MATCHED');
    // The fact stays as it arrived; what the deposit used is the resolution's.
    expect(paid.body.amount.value).to.equal('150.00');
    expect(paid.body.matchedAmount).to.deep.equal({ value: '100.00', asset: 'BRL', decimals: 2 });
    const op = await untilStatus(c, dep.id, 'COMPLETED');
    expect(op.transactions.map((t: { amount: { value: string } }) => t.amount.value)).to.deep.equal(['100.00']);
    const remainder = (await paymentsOf(c, `operationId[eq]=${dep.id}`)).filter((p) => p.remainderOf === paid.body.id);
    expect(remainder).to.have.length(1);
    expect(remainder[0]).to.deep.include({ status: 'UNMATCHED', endToEndId: paid.body.endToEndId });
    expect(remainder[0].amount.value).to.equal('50.00');
  });

  it(
    'an underpayment fails AMOUNT_MISMATCH; an overshooting top-up and a replay complete it, with a ' + 'remainder',
    async () => {
      const { services } = await stack();
      const before = await balance(c, accountId, 'BRL');
      const dep = await openDeposit(c, accountId, '100.00');
      const short = await pay(c, dep.id, '60.00');
      expect(short.body.status).to.equal('MATCHED');
      const failed = await untilStatus(c, dep.id, 'FAILED');
      expect(failed.currentState.reason.code).to.equal('AMOUNT_MISMATCH');
      const topUp = await pay(c, dep.id, '70.00');
      expect(topUp.body.status).to.equal('MATCHED');
      expect((await getOp(c, dep.id)).currentState.status).to.equal('FAILED');
      const replayed = presentOperation(
        await replayDeposit(services, tenantEm(services.orm, c.customerId), dep.id, 'operator:test'),
      );
      expect(replayed.currentState.status).to.equal('COMPLETED');
      const used = replayed.transactions.map((t: { amount: { value: string } }) => t.amount.value);
      expect(used).to.deep.equal(['60.00', '40.00']);
      const records = await paymentsOf(c, `operationId[eq]=${dep.id}`);
      const remainder = records.find((p) => p.remainderOf === topUp.body.id);
      expect(remainder).to.deep.include({ status: 'UNMATCHED' });
      expect(remainder!.amount.value).to.equal('30.00');
      const topUpRecord = records.find((p) => p.id === topUp.body.id)!;
      expect([topUpRecord.amount.value, topUpRecord.matchedAmount?.value]).to.deep.equal(['70.00', '40.00']);
      expect((await balance(c, accountId, 'BRL')).available).to.equal(
        new Decimal(before.available).plus(100).toFixed(2),
      );
    },
  );

  it('payments after expiry and after the replay window are kept UNMATCHED (no 409); nothing is credited', async () => {
    const before = await balance(c, accountId, 'BRL');
    const expired = await openDeposit(c, accountId, '10.00', { deposit: 1, replay: 1 });
    const expiredOp = await untilStatus(c, expired.id, 'FAILED');
    expect(expiredOp.currentState.reason.code).to.equal('DEPOSIT_EXPIRED');
    const late = await pay(c, expired.id, '10.00');
    expect([late.status, late.body.status]).to.deep.equal([200, 'UNMATCHED']);

    // Short-paid, then its replay window closes: what counted toward it goes back to UNMATCHED.
    const short = await openDeposit(c, accountId, '10.00', { deposit: 30, replay: 2 });
    expect((await pay(c, short.id, '4.00')).body.status).to.equal('MATCHED');
    await untilStatus(c, short.id, 'FAILED');
    const released = (ps: PaymentView[]) => ps.length === 1 && ps[0].status === 'UNMATCHED';
    await eventually(() => paymentsOf(c, `operationId[eq]=${short.id}`), released, 20000, 200);
    const afterWindow = await pay(c, short.id, '6.00');
    expect([afterWindow.status, afterWindow.body.status]).to.deep.equal([200, 'UNMATCHED']);
    expect((await getOp(c, short.id)).currentState.status).to.equal('FAILED');
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
    await assertLedgerBalanced();
  });

  it('a repeated report of one end-to-end id is one payment, answered with the same record', async () => {
    const dep = await openDeposit(c, accountId, '25.00');
    const ref = e2e();
    const first = await pay(c, dep.id, '25.00', { endToEndId: ref });
    const again = await pay(c, dep.id, '25.00', { endToEndId: ref });
    expect([first.status, again.status]).to.deep.equal([200, 200]);
    expect(again.body.id).to.equal(first.body.id);
    expect(again.body.status).to.equal('MATCHED');
    expect((await paymentsOf(c, `operationId[eq]=${dep.id}`)).map((p) => p.id)).to.deep.equal([first.body.id]);
    const { services } = await stack();
    const sql = `select count(*)::int as n from ledger_transactions where key like ?`;
    const [{ n }] = await systemEm(services.orm).execute(sql, [`inbound:${first.body.id}:%`]);
    expect(n, 'its arrival is posted once').to.equal(1);
  });

  it('the same idempotency key replays the record; a different body with it is 422', async () => {
    const dep = await openDeposit(c, accountId, '5.00');
    const key = randomUUID();
    const first = await pay(c, dep.id, '5.00', { key });
    const replay = await pay(c, dep.id, '5.00', { key });
    const answer = [replay.status, replay.headers['idempotent-replayed'], replay.body.id];
    expect(answer).to.deep.equal([200, 'true', first.body.id]);
    const other = await pay(c, dep.id, '6.00', { key });
    expect([other.status, other.body.code]).to.deep.equal([422, 'IDEMPOTENCY_KEY_REUSED']);
    expect(await paymentsOf(c, `operationId[eq]=${dep.id}`)).to.have.length(1);
  });

  it('lists and reads with filters; another customer sees nothing and gets 404; unknown deposit 404', async () => {
    const { http } = await stack();
    const dep = await openDeposit(c, accountId, '7.00');
    const paid = await pay(c, dep.id, '7.00');
    const one = await http.get(`/api/inbound-payments/${paid.body.id}`).set(c.auth);
    expect([one.status, one.body.id, one.body.status]).to.deep.equal([200, paid.body.id, 'MATCHED']);
    const page = await http.get('/api/inbound-payments').query({ filters: 'status[eq]=MATCHED', limit: 2 }).set(c.auth);
    expect(page.status).to.equal(200);
    expect(page.body.data).to.have.length(2);
    expect(page.body.meta.total).to.be.at.least(4);
    expect(page.body.meta.nextCursor).to.be.a('string');
    const bad = await http.get('/api/inbound-payments').query({ filters: 'amount[eq]=1' }).set(c.auth);
    expect([bad.status, bad.body.code]).to.deep.equal([400, 'INVALID_FILTER']);
    const stranger = await newCustomer('Stranger Ltda');
    expect((await http.get('/api/inbound-payments').set(stranger.auth)).body.meta.total).to.equal(0);
    const hidden = await http.get(`/api/inbound-payments/${paid.body.id}`).set(stranger.auth);
    expect([hidden.status, hidden.body.code]).to.deep.equal([404, 'NOT_FOUND']);
    const foreign = await pay(stranger, dep.id, '7.00');
    expect([foreign.status, foreign.body.code]).to.deep.equal([404, 'NOT_FOUND']);
    expect((await http.get(`/api/inbound-payments/${randomUUID()}`).set(c.auth)).status).to.equal(404);
  });

  it('a payment recorded by a reporter that died before the workflow answered is settled by the sweep', async () => {
    const { services } = await stack();
    const em = () => tenantEm(services.orm, c.customerId);
    const open = await openDeposit(c, accountId, '12.00');
    const closed = await openDeposit(c, accountId, '12.00', { deposit: 1, replay: 1 });
    await untilStatus(c, closed.id, 'FAILED');
    // Step 1 only, as a process killed right after the record's COMMIT leaves it.
    const amount = { value: '12.00', asset: 'BRL' as const };
    const orphanOpen = await recordInboundPayment(em(), open.id, { amount, endToEndId: e2e() });
    const orphanClosed = await recordInboundPayment(em(), closed.id, { amount, endToEndId: e2e() });
    expect((await sweepReceivedPayments(services, { olderThanSeconds: 0 })).seen).to.be.at.least(2);
    const statusOf = async (id: string) => (await paymentsOf(c, `operationId[eq]=${id}`)).map((p) => [p.id, p.status]);
    expect(await statusOf(open.id)).to.deep.equal([[orphanOpen.id, 'MATCHED']]);
    await untilStatus(c, open.id, 'COMPLETED');
    expect(await statusOf(closed.id)).to.deep.equal([[orphanClosed.id, 'UNMATCHED']]);
    const again = await sweepReceivedPayments(services, { olderThanSeconds: 0 });
    expect(again.seen, 'nothing left undecided').to.equal(0);
  });

  it("one payment per rail reference across customers: a second customer's report is 409", async () => {
    const { services } = await stack();
    const other = await newCustomer('Other Payer Ltda');
    const otherAccount = (await activeAccount(other, ['BRL'])).id;
    const mine = await openDeposit(c, accountId, '15.00');
    const theirs = await openDeposit(other, otherAccount, '15.00');
    const ref = e2e();
    const first = await pay(c, mine.id, '15.00', { endToEndId: ref });
    expect([first.status, first.body.status]).to.deep.equal([200, 'MATCHED']);
    const second = await pay(other, theirs.id, '15.00', { endToEndId: ref });
    expect([second.status, second.body.code]).to.deep.equal([409, 'RAIL_REFERENCE_IN_USE']);
    expect(JSON.stringify(second.body), "the first payment's owner is not told").to.not.include(first.body.id);
    expect(await paymentsOf(other, `operationId[eq]=${theirs.id}`)).to.deep.equal([]);
    const sql = `select count(*)::int as n from inbound_payments where end_to_end_id = ?`;
    const [{ n }] = await systemEm(services.orm).execute(sql, [ref]);
    expect(n, 'one record system-wide').to.equal(1);
    expect((await getOp(other, theirs.id)).currentState.status).to.equal('REQUESTED');
    await assertLedgerBalanced();
  });

  it('a payment recorded and not decided yet is RECEIVED (listed and filtered as such), never UNMATCHED', async () => {
    const { services, http } = await stack();
    const dep = await openDeposit(c, accountId, '9.00');
    const amount = { value: '9.00', asset: 'BRL' as const };
    const recorded = await recordInboundPayment(tenantEm(services.orm, c.customerId), dep.id, {
      amount,
      endToEndId: e2e(),
    });
    const one = await http.get(`/api/inbound-payments/${recorded.id}`).set(c.auth);
    expect([one.status, one.body.status]).to.deep.equal([200, 'RECEIVED']);
    const received = await paymentsOf(c, `status[eq]=RECEIVED;operationId[eq]=${dep.id}`);
    expect(received.map((p) => p.id)).to.deep.equal([recorded.id]);
    expect(await paymentsOf(c, `status[eq]=UNMATCHED;operationId[eq]=${dep.id}`)).to.deep.equal([]);
    await sweepReceivedPayments(services, { olderThanSeconds: 0 });
    expect((await paymentsOf(c, `operationId[eq]=${dep.id}`))[0].status).to.equal('MATCHED');
  });

  it('the facts of a payment never change: the database refuses an update of the amount or the deposit', async () => {
    const { services } = await stack();
    const dep = await openDeposit(c, accountId, '4.00');
    const paid = await pay(c, dep.id, '4.00');
    const em = systemEm(services.orm);
    // Only a chain record in no balance, seen in another block, takes a new log's facts (decision 0326): never this.
    const inAnotherBlock = "block_hash = '0x01', status = 'PENDING', amount = amount + 1";
    for (const change of [
      'amount = amount + 1',
      'operation_id = null',
      "end_to_end_id = 'E0'",
      "rail = 'TED'",
      inAnotherBlock,
    ]) {
      const refused = await em.execute(`update inbound_payments set ${change} where id = ?`, [paid.body.id]).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(refused?.message, change).to.include('never change');
    }
  });

  it("a decision naming a payment that is not the deposit's is ignored at once (not retried forever)", async () => {
    const { services } = await stack();
    const dep = await openDeposit(c, accountId, '6.00');
    const handle = services.temporal.workflow.getHandle(operationWorkflowId(dep.id));
    // The row below carries no start (a reporter's would while the start waits in the outbox): the deposit's
    // workflow must be running before it is sent, or the send finds no workflow and drops it.
    await eventually(
      () =>
        handle.describe().then(
          (d) => d.status.name,
          () => 'NOT_STARTED',
        ),
      (status) => status === 'RUNNING',
      15000,
      50,
    );
    // A row no reporter would write (its payment is not this deposit's), committed with its signal, then sent.
    const decisionId = randomUUID();
    const row = {
      id: decisionId,
      workflowId: handle.workflowId,
      kind: 'INBOUND_PAYMENT' as const,
      customerId: c.customerId,
      target: randomUUID(),
      decision: null,
      reason: null,
      actor: 'operator:test',
    };
    await inTransaction(systemEm(services.orm), (tx) => addDecision(tx, row, { taskQueue: services.config.taskQueue }));
    await sendDecisionNow(services.orm, services.temporal, decisionId);
    const ignored = await eventually(
      () => handle.query(ignoredSignalsQuery),
      (list) => list.length > 0,
      15000,
      100,
    );
    expect(ignored.map((i) => [i.signal, i.decisionId])).to.deep.equal([['decision', decisionId]]);
    // The deposit is unharmed: it still takes its payment.
    expect((await pay(c, dep.id, '6.00')).body.status).to.equal('MATCHED');
    await untilStatus(c, dep.id, 'COMPLETED');
  });

  it('a payment another caller decided MATCHED is answered once its deposit has reconciled, not before', async () => {
    const { services } = await stack();
    const dep = await openDeposit(c, accountId, '8.00');
    // Where a PSP's notice leaves it between the deposit's two steps: decided MATCHED, its reconciliation (what it
    // counted for, the deposit COMPLETED) not committed yet. No decision row: the workflow has not heard of it.
    const recorded = await systemEm(services.orm).transactional(async (em) =>
      recordPayment(em, {
        customerId: c.customerId,
        operationId: dep.id,
        accountId,
        amount: new Dec('8.00'),
        asset: 'BRL',
        rail: 'PIX_KEY',
        endToEndId: e2e(),
      }),
    );
    await systemEm(services.orm).execute(`update inbound_payments set status = 'MATCHED' where id = ?`, [
      recorded.payment.id,
    ]);
    const matched = { ...recorded.payment, status: 'MATCHED' as const };
    const started = Date.now();
    expect(await decideInboundPayment(services, matched, 1500)).to.equal('RECEIVED');
    expect(Date.now() - started).to.be.at.least(1500);

    // A second payment reaches the workflow, which reconciles: the first, oldest, pays the deposit.
    expect((await pay(c, dep.id, '1.00')).body.status).to.equal('UNMATCHED');
    expect(await decideInboundPayment(services, matched, 15000)).to.equal('DECIDED');
    const op = await getOp(c, dep.id);
    expect(op.currentState.status).to.equal('COMPLETED');
    expect(op.transactions.map((t: { id: string }) => t.id)).to.deep.equal([recorded.payment.id]);
    await assertLedgerBalanced();
  });

  it('the sweep goes on past a payment whose workflow does not answer: batches, a deadline per decision', async () => {
    const { services, config } = await stack();
    // A deposit whose workflow runs where no worker polls: its decision can never be answered.
    const stuckOp = randomUUID();
    await services.temporal.workflow.start('operationWorkflow', {
      workflowId: operationWorkflowId(stuckOp),
      taskQueue: `${config.taskQueue}-nobody-polls`,
      args: [{ operationId: stuckOp, type: 'DEPOSIT' }],
    });
    const stuck = await systemEm(services.orm).transactional(async (em) =>
      recordPayment(em, {
        customerId: c.customerId,
        operationId: stuckOp,
        accountId,
        amount: new Dec('1.00'),
        asset: 'BRL',
        rail: 'PIX_KEY',
        endToEndId: e2e(),
      }),
    );
    const dep = await openDeposit(c, accountId, '8.00');
    const amount = { value: '8.00', asset: 'BRL' as const };
    const orphan = await recordInboundPayment(tenantEm(services.orm, c.customerId), dep.id, {
      amount,
      endToEndId: e2e(),
    });
    const started = Date.now();
    const result = await sweepReceivedPayments(services, { olderThanSeconds: 0, batchSize: 1, deadlineMs: 2000 });
    expect(Date.now() - started).to.be.below(15000);
    expect(result).to.deep.include({ failed: 0 });
    expect(result.waiting, 'the stuck one waits for a later pass').to.equal(1);
    expect(result.decided).to.be.at.least(1);
    const statusOf = async (id: string) => (await paymentsOf(c, `operationId[eq]=${id}`)).map((p) => p.status);
    expect(await statusOf(dep.id)).to.deep.equal(['MATCHED']);
    expect((await paymentsOf(c, 'status[eq]=RECEIVED')).map((p) => p.id)).to.deep.equal([stuck.payment.id]);
    expect(orphan.status).to.equal('RECEIVED');
    await services.temporal.workflow.getHandle(operationWorkflowId(stuckOp)).terminate('test over');
    const em = systemEm(services.orm);
    await em.execute(`update inbound_payments set status = 'UNMATCHED' where id = ?`, [stuck.payment.id]);
  });
});
