// Workflow decisions are rows (decision 0068): a decision reaches a workflow only as a committed row named by
// the signal sent after COMMIT; the workflow reads and validates it. A request that dies mid-way is retried onto
// the same decision, a signal made by hand changes nothing and is listed by the `ignoredSignals` query, and a
// decision whose writer died before sending it is sent by the outbox relay.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { systemEm, tenantEm } from '../../db/orm';
import { inTransaction } from '../../db/transaction';
import { operationWorkflowId } from '../../workflows/ids';
import { accountDecisionSignal } from '../../workflows/account-review';
import { instructionDecisionSignal } from '../../workflows/instruction-review';
import {
  holdDecisionSignal,
  inboundPaymentSignal,
  inboundPaymentUpdate,
  replaySignal,
} from '../../workflows/operations/contract';
import { decisionSignal, ignoredSignalsQuery, IgnoredSignal } from '../../workflows/decision';
import { recordAccountDecision } from '../../services/account-review';
import { recordInboundPayment, reportInboundPayment } from '../../services/reported-payments';
import { sweepReceivedPayments } from '../../payments/inbound-payment-sweep';
import { createAccount, uploadAllDocuments, submitReview, activeAccount, getAccount } from '../helpers/fixtures';
import { approvedInstruction, beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { fund, quote, untilStatus, getOp } from '../helpers/money';
import { openDeposit, pay, paymentsOf } from '../helpers/inbound-payments';
import { exitWithin, killAll, spawnApi } from '../helpers/processes';
import { eventually, idem, newCustomer, stack, untilStarted, withoutRelay, TestCustomer } from '../helpers/stack';

async function underReview(c: TestCustomer): Promise<string> {
  const account = await createAccount(c, { assets: ['BRL'] });
  await uploadAllDocuments(c, account.id);
  await submitReview(c, account.id);
  return account.id;
}

async function decisionsOf(target: string) {
  const { services } = await stack();
  return (await systemEm(services.orm).execute(
    'select id, kind, decision, actor from workflow_decisions where target = ? order by created_at',
    [target],
  )) as { id: string; kind: string; decision: string | null; actor: string }[];
}

/**
 * The signal rows of `c`'s decisions still waiting to be sent. Not every row of the table: a file run before in the
 * same database may leave rows on a task queue of its own, whose worker it stopped, and no relay here sends them.
 */
async function signalRowsOf(c: TestCustomer): Promise<number> {
  const { services } = await stack();
  const [row] = await systemEm(services.orm).execute(
    `select count(*)::int as n from workflow_signals s join workflow_decisions d on d.id = s.decision_id
     where d.customer_id = ?`,
    [c.customerId],
  );
  return row.n as number;
}

/** What a workflow says it ignored, once it has seen `count` such signals. */
async function ignoredBy(workflowId: string, count: number): Promise<IgnoredSignal[]> {
  const { services } = await stack();
  const handle = services.temporal.workflow.getHandle(workflowId);
  return eventually(
    () => handle.query(ignoredSignalsQuery),
    (ignored) => ignored.length >= count,
    10000,
    100,
  );
}

async function heldWithdrawal(c: TestCustomer): Promise<string> {
  const { http } = await stack();
  const account = await activeAccount(c, ['USD', 'BRL']);
  await fund(c, account.id, 'USD', '20000.00');
  const { beneficiaryId, instructionId } = await approvedInstruction(c, {
    dictKeyType: 'PHONE',
    dictKey: '+5511987654321',
  });
  const q = await quote(c, { accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '12000.00' });
  const ref = { type: 'REFERENCE', id: beneficiaryId, paymentInstruction: { type: 'REFERENCE', id: instructionId } };
  const res = await http
    .post('/api/operations/withdrawal')
    .set(c.auth)
    .set(idem())
    .send({ accountId: account.id, quoteId: q.id, beneficiary: ref });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  await untilStatus(c, res.body.id, 'ON_HOLD');
  return res.body.id;
}

// What an operator reports with `deposit pay` is a TED from the bank statement: a rail whose provider records its own
// payments is refused there (decision 0340).
const BY_TED = { rail: 'TED', asset: 'BRL' } as const;

describe('workflow decisions are committed rows', function () {
  this.timeout(180000);
  let c: TestCustomer;

  before(async () => {
    c = await newCustomer('Decisions Ltda');
  });

  after(killAll);

  it('a sandbox decision whose request dies before its answer is retried onto the decision it recorded', async () => {
    const { http, config } = await stack();
    const crashing = await spawnApi('api-decision-crash-before-commit', config.taskQueue, {
      CAMBIO_TEST_CRASH_AT: 'before-commit',
    });
    const accountId = await underReview(c);
    const key = randomUUID();
    const died = await fetch(`${crashing.url}/api/sandbox/accounts/${accountId}/review`, {
      method: 'POST',
      headers: { ...c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': key },
      body: JSON.stringify({ decision: 'APPROVE' }),
    }).then(
      (r) => `answered ${r.status}`,
      (err: Error) => err,
    );
    expect(died, 'the request got no answer (its process died)').to.be.instanceOf(Error);
    await exitWithin(crashing);
    // The workflow acted: the decision it acted on is in the database, committed before the signal went.
    await eventually(
      () => getAccount(c, accountId),
      (a) => a.currentState.status === 'ACTIVE',
    );
    const recorded = await decisionsOf(accountId);
    expect(recorded.map((d) => [d.kind, d.decision, d.actor])).to.deep.equal([
      ['ACCOUNT_REVIEW', 'APPROVE', `customer:${c.customerId}`],
    ]);
    // The client's retry with the same key is answered with what its decision did, not 409 for its own decision.
    const retry = await http
      .post(`/api/sandbox/accounts/${accountId}/review`)
      .set(c.auth)
      .set('X-Idempotency-Key', key)
      .send({ decision: 'APPROVE' });
    expect([retry.status, retry.body.currentState?.status], JSON.stringify(retry.body)).to.deep.equal([200, 'ACTIVE']);
    expect(await decisionsOf(accountId), 'the retry recorded nothing more').to.have.length(1);
  });

  it('ignores and lists decision signals made by hand: an account review round stays UNDER_REVIEW', async () => {
    const { services, http } = await stack();
    const accountId = await underReview(c);
    const workflowId = `account-review-${accountId}-1`;
    const handle = services.temporal.workflow.getHandle(workflowId);
    await untilStarted(handle);
    // A real decision of another account's round: a row, but not this workflow's.
    const other = await underReview(c);
    await http
      .post(`/api/sandbox/accounts/${other}/review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'REJECT', reason: 'another round' });
    const [foreign] = await decisionsOf(other);

    await handle.signal(accountDecisionSignal, { decision: 'APPROVE' });
    await handle.signal(decisionSignal, { decisionId: randomUUID() });
    await handle.signal(decisionSignal, { decisionId: foreign.id });
    const ignored = await ignoredBy(workflowId, 3);
    // Each decision signal is checked against its row by an activity, so the two are ignored in either order.
    expect(ignored.map((i) => i.signal).sort()).to.deep.equal(['accountDecision', 'decision', 'decision']);
    expect(ignored.map((i) => i.decisionId)).to.include(foreign.id);
    expect((await getAccount(c, accountId)).currentState.status).to.equal('UNDER_REVIEW');

    // The recorded decision still decides it.
    const decided = await http
      .post(`/api/sandbox/accounts/${accountId}/review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'APPROVE' });
    expect([decided.status, decided.body.currentState.status]).to.deep.equal([200, 'ACTIVE']);
  });

  it('ignores hand-made decisions to an instruction review, a held withdrawal and a failed deposit', async () => {
    const { services, http } = await stack();
    const created = await http
      .post('/api/beneficiaries')
      .set(c.auth)
      .set(idem())
      .send(beneficiaryBody(pixInstruction('EMAIL', 'hand-made@example.com')));
    expect(created.status).to.equal(201);
    const instructionId: string = created.body.paymentInstructions[0].id;
    const review = services.temporal.workflow.getHandle(`instruction-review-${instructionId}`);
    await untilStarted(review);
    await review.signal(instructionDecisionSignal, { decision: 'APPROVE' });
    expect((await ignoredBy(review.workflowId, 1)).map((i) => i.signal)).to.deep.equal(['instructionDecision']);

    const held = await heldWithdrawal(c);
    const withdrawal = services.temporal.workflow.getHandle(operationWorkflowId(held));
    await withdrawal.signal(holdDecisionSignal, { decision: 'APPROVE' });
    await withdrawal.signal(decisionSignal, { decisionId: 'not-a-uuid' });
    expect((await ignoredBy(withdrawal.workflowId, 2)).map((i) => i.signal)).to.deep.equal([
      'holdDecision',
      'decision',
    ]);

    const account = await activeAccount(c, ['BRL']);
    const dep = await openDeposit(c, account.id, '10.00');
    expect((await pay(c, dep.id, '4.00')).status).to.equal(200);
    await untilStatus(c, dep.id, 'FAILED');
    const deposit = services.temporal.workflow.getHandle(operationWorkflowId(dep.id));
    await deposit.signal(replaySignal);
    await deposit.signal(inboundPaymentSignal, { paymentId: randomUUID() });
    expect((await ignoredBy(deposit.workflowId, 2)).map((i) => i.signal)).to.deep.equal(['replay', 'inboundPayment']);

    // Nothing changed: the instruction waits for its review, the withdrawal for its decision, the deposit failed.
    const beneficiary = await http.get(`/api/beneficiaries/${created.body.id}`).set(c.auth);
    expect(beneficiary.body.paymentInstructions[0].currentState.status).to.equal('PENDING_REVIEW');
    expect((await getOp(c, held)).currentState.status).to.equal('ON_HOLD');
    expect((await getOp(c, dep.id)).currentState.status).to.equal('FAILED');
    const hold = await http
      .post(`/api/sandbox/operations/${held}/hold-review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'REJECT' });
    expect([hold.status, hold.body.currentState.status]).to.deep.equal([200, 'FAILED']);
    expect((await decisionsOf(held)).map((d) => d.decision)).to.deep.equal(['REJECT']);
  });

  it('a second decision on the same review is 409 INVALID_STATE and is never recorded', async () => {
    const { http } = await stack();
    const accountId = await underReview(c);
    const decide = (decision: string) =>
      http
        .post(`/api/sandbox/accounts/${accountId}/review`)
        .set(c.auth)
        .set(idem())
        .send(decision === 'REJECT' ? { decision, reason: 'racing' } : { decision });
    const answers = await Promise.all([decide('APPROVE'), decide('REJECT')]);
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses, JSON.stringify(answers.map((a) => a.body))).to.deep.equal([200, 409]);
    expect(await decisionsOf(accountId)).to.have.length(1);
  });

  it('delivers a decision whose workflow was not started yet, and one whose writer died before its send', async () => {
    const { services } = await stack();
    // Not started yet: the round's start waits in the outbox; the decision starts it (signalWithStart).
    const waiting = await withoutRelay(async () => {
      const accountId = await underReview(c);
      const view = await (
        await import('../../services/account-review')
      ).decideAccountReview(
        services,
        tenantEm(services.orm, c.customerId),
        accountId,
        { decision: 'APPROVE' },
        'operator:test',
      );
      return view.account.status;
    });
    expect(waiting).to.equal('ACTIVE');

    // Committed, then the writer died before its send: the relay sends it.
    const accountId = await underReview(c);
    await inTransaction(tenantEm(services.orm, c.customerId), (tx) =>
      recordAccountDecision(
        services,
        tx,
        accountId,
        { decision: 'REJECT', reason: 'relayed' },
        {
          decisionId: randomUUID(),
          actor: 'operator:test',
        },
      ),
    );
    const rejected = await eventually(
      () => getAccount(c, accountId),
      (a) => a.currentState.status !== 'UNDER_REVIEW',
    );
    expect(rejected.currentState.status).to.equal('ACTION_REQUIRED');
    await eventually(
      () => signalRowsOf(c),
      (n) => n === 0,
    ); // every signal row was sent and removed
  });

  it('an inbound payment reaches its deposit as a decision row: not started, writer died, deposit closed', async () => {
    const { services } = await stack();
    const account = await activeAccount(c, ['BRL']);
    const em = () => tenantEm(services.orm, c.customerId);
    const via = { taskQueue: services.config.taskQueue, actor: 'operator:test' };
    const e2e = () => `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;
    const amount = { value: '5.00', asset: 'BRL' as const };
    const statusOf = async (id: string) => (await paymentsOf(c, `operationId[eq]=${id}`)).map((p) => p.status);

    // Not started yet: the deposit's start waits in the outbox; the payment's decision starts it (signalWithStart).
    const early = await withoutRelay(async () => {
      const dep = await openDeposit(c, account.id, '5.00', undefined, BY_TED);
      const payment = await reportInboundPayment(
        services,
        em(),
        dep.id,
        { amount, endToEndId: e2e() },
        'operator:test',
      );
      return { dep, payment };
    });
    expect(early.payment.status).to.equal('MATCHED');
    expect((await getOp(c, early.dep.id)).currentState.status).to.equal('COMPLETED');
    expect((await decisionsOf(early.payment.id)).map((d) => [d.kind, d.actor])).to.deep.equal([
      ['INBOUND_PAYMENT', 'operator:test'],
    ]);

    // Recorded with its decision, then the writer died before its send: the relay sends it.
    const open = await openDeposit(c, account.id, '5.00');
    const orphan = await recordInboundPayment(em(), open.id, { amount, endToEndId: e2e() }, { via });
    expect(orphan.status).to.equal('RECEIVED');
    await untilStatus(c, open.id, 'COMPLETED');
    expect(await statusOf(open.id)).to.deep.equal(['MATCHED']);

    // The same for a deposit whose workflow has closed: the relay's signal finds none, and it is UNMATCHED.
    const closed = await openDeposit(c, account.id, '5.00', { deposit: 1, replay: 1 });
    await untilStatus(c, closed.id, 'FAILED');
    await services.temporal.workflow.getHandle(operationWorkflowId(closed.id)).result();
    await recordInboundPayment(em(), closed.id, { amount, endToEndId: e2e() }, { via });
    await eventually(
      () => statusOf(closed.id),
      (s) => s[0] === 'UNMATCHED',
    );

    // A hand-made update naming a payment recorded for the deposit changes nothing and is listed; the payment's
    // own decision (here queued by the sweep: it was recorded without one) is what decides it.
    const dep = await openDeposit(c, account.id, '5.00');
    const bare = await recordInboundPayment(em(), dep.id, { amount, endToEndId: e2e() });
    const deposit = services.temporal.workflow.getHandle(operationWorkflowId(dep.id));
    await untilStarted(deposit);
    const answer = await deposit.executeUpdate(inboundPaymentUpdate, { args: [{ paymentId: bare.id }] });
    expect(answer).to.equal('IGNORED');
    expect((await ignoredBy(deposit.workflowId, 1)).map((i) => i.signal)).to.deep.equal(['inboundPaymentUpdate']);
    expect(await statusOf(dep.id)).to.deep.equal(['RECEIVED']);
    await sweepReceivedPayments(services, { olderThanSeconds: 0 });
    await untilStatus(c, dep.id, 'COMPLETED');
    expect(await statusOf(dep.id)).to.deep.equal(['MATCHED']);
    expect((await decisionsOf(bare.id)).map((d) => [d.kind, d.actor])).to.deep.equal([
      ['INBOUND_PAYMENT', 'system:sweep'],
    ]);
    await eventually(
      () => signalRowsOf(c),
      (n) => n === 0,
    );
  });
});
