// A review whose workflow an operator closed by hand (`temporal workflow terminate`, the Temporal UI) still takes
// its decision (decision 0315): the decision's signal starts the workflow again under the same id, and it applies
// the decision once. Terminated here through the test's Temporal server, decided through the CLI in its own process.
import { expect } from 'chai';
import { heldWithdrawal } from '../helpers/held-withdrawal';
import { cambio, cambioFails } from '../helpers/cli';
import { assertLedgerBalanced, balance, getOp } from '../helpers/money';
import { beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { eventually, idem, newCustomer, stack, untilStarted, withoutRelay } from '../helpers/stack';
import { instructionReviewWorkflowId, operationWorkflowId } from '../../workflows/ids';
import { payoutIdFor } from '../../rails/pix/ids';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { addDecision } from '../../db/repositories/workflow-decisions';
import { sendDecisionNow } from '../../workflows/send-signal';

/** Terminates a running workflow as an operator would, and waits until Temporal shows it closed. */
async function terminateByHand(workflowId: string): Promise<void> {
  const { services } = await stack();
  const handle = services.temporal.workflow.getHandle(workflowId);
  await untilStarted(handle);
  await handle.terminate('closed by hand');
  expect((await handle.describe()).status.name).to.equal('TERMINATED');
}

/**
 * A REJECT of held withdrawal `id` recorded as before its signal carried a start (its workflow closed by hand): the
 * signal finds the workflow closed and is dropped, the withdrawal stays ON_HOLD with a decision recorded. What the
 * send answered.
 */
async function dropRecordedReject(customerId: string, id: string) {
  const { services, config } = await stack();
  const decisionId = randomUUID();
  return withoutRelay(async () => {
    await systemEm(services.orm).transactional((tx) =>
      addDecision(
        tx,
        {
          id: decisionId,
          workflowId: operationWorkflowId(id),
          kind: 'HOLD',
          customerId,
          target: id,
          decision: 'REJECT',
          reason: 'dropped',
          actor: 'operator:first',
        },
        { taskQueue: config.taskQueue },
      ),
    );
    return sendDecisionNow(services.orm, services.temporal, decisionId);
  });
}

describe('a review whose workflow was closed by hand', function () {
  this.timeout(120000);

  it('a held withdrawal rejected after its workflow was terminated releases its hold once', async () => {
    const c = await newCustomer();
    const id = await heldWithdrawal(c, 'terminated-reject@example.com');
    const accountId: string = (await getOp(c, id)).account.id;
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '5000.00', held: '55000.00' });
    await terminateByHand(operationWorkflowId(id));

    const rejected = await cambio('withdrawal', 'reject', id, '--reason', 'payee looks wrong');
    expect(rejected.stdout.trim()).to.equal(`operation ${id} is FAILED`);
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '60000.00', held: '0.00' });

    // A second decision is a clear refusal naming where the withdrawal is, and moves nothing.
    const again = await cambioFails('withdrawal', 'reject', id);
    expect(again.body.code).to.equal('INVALID_STATE');
    expect(again.body.message).to.equal(`operation is WITHDRAWAL in FAILED; this needs a WITHDRAWAL ON_HOLD`);
    const approve = await cambioFails('withdrawal', 'approve', id);
    expect(approve.body.message).to.equal(`operation is WITHDRAWAL in FAILED; this needs a WITHDRAWAL ON_HOLD`);
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '60000.00', held: '0.00' });
    await assertLedgerBalanced();
  });

  it('a held withdrawal approved after its workflow was terminated pays out once', async () => {
    const c = await newCustomer();
    const id = await heldWithdrawal(c, 'terminated-approve@example.com');
    const accountId: string = (await getOp(c, id)).account.id;
    await terminateByHand(operationWorkflowId(id));

    const approved = await cambio('withdrawal', 'approve', id);
    expect(approved.stdout.trim()).to.equal(`operation ${id} is COMPLETED`);
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '5000.00', held: '0.00' });

    // The run that paid has completed: a decision now is refused, and never starts it again.
    const again = await cambioFails('withdrawal', 'approve', id);
    expect(again.body.message).to.equal(`operation is WITHDRAWAL in COMPLETED; this needs a WITHDRAWAL ON_HOLD`);
    const { services } = await stack();
    const runs = [];
    for await (const w of services.temporal.workflow.list({ query: `WorkflowId = '${operationWorkflowId(id)}'` }))
      runs.push(w.status.name);
    expect(runs.sort()).to.deep.equal(['COMPLETED', 'TERMINATED']);
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '5000.00', held: '0.00' });
    await assertLedgerBalanced();
  });

  // A held withdrawal approved, its payout sent, then its run closed by hand: a run its decision's signal starts again
  // (the relay's resend of a send whose answer was lost) finds it PROCESSING. It follows the payout the first run
  // ordered, never moves it back to ON_HOLD, and never sends it as a first send, whose refusal would be final while
  // the first PUT may pay (decision 0327).
  it('a withdrawal whose paying run was closed by hand: a run started again follows its payout', async () => {
    const { psp, services, config } = await stack();
    const key = `terminated-paying-${Date.now()}@example.com`;
    await psp.control('POST', '/payout-rules', { chave: key, status: 'EM_PROCESSAMENTO' });
    const c = await newCustomer();
    const id = await heldWithdrawal(c, key);
    const accountId: string = (await getOp(c, id)).account.id;
    await cambio('withdrawal', 'approve', id);
    const idEnvio = payoutIdFor(id);
    const atPsp = async () =>
      Object.values((await psp.control('GET', '/state')).body.payouts as Record<string, { idEnvio: string }>).filter(
        (p) => p.idEnvio === idEnvio,
      );
    await eventually(atPsp, (payouts) => payouts.length === 1, 30000);
    await terminateByHand(operationWorkflowId(id));
    // From here the PSP's read side lags (404) and it refuses the repeated idEnvio (422).
    for (const fault of [
      { method: 'GET', pathPrefix: '/v2/gn/pix/enviados/id-envio/', status: 404, count: 2 },
      { method: 'PUT', pathPrefix: '/v3/gn/pix/', status: 422, count: 1 },
    ]) {
      expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);
    }
    // The run the decision's signal starts again: the withdrawal's workflow, as its creation started it.
    const again = await services.temporal.workflow.start('operationWorkflow', {
      workflowId: operationWorkflowId(id),
      taskQueue: config.taskQueue,
      args: [{ operationId: id, type: 'WITHDRAWAL', requiresReview: true }],
    });
    const shown = await getOp(c, id);
    expect(shown.states.map((st: { status: string }) => st.status)).to.deep.equal([
      'REQUESTED',
      'ON_HOLD',
      'PROCESSING',
    ]);
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '5000.00', held: '55000.00' });
    expect((await psp.control('POST', `/payouts/${idEnvio}/settle`, { status: 'REALIZADO' })).status).to.equal(204);
    expect(await again.result()).to.equal('COMPLETED');
    const done = await getOp(c, id);
    expect(done.states.map((st: { status: string }) => st.status)).to.deep.equal([
      'REQUESTED',
      'ON_HOLD',
      'PROCESSING',
      'COMPLETED',
    ]);
    expect(await atPsp()).to.have.length(1);
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '5000.00', held: '0.00', total: '5000.00' });
    await assertLedgerBalanced();
  });

  it('a decision its closed workflow dropped is applied when the same decision is taken again', async () => {
    const c = await newCustomer();
    const id = await heldWithdrawal(c, 'dropped-decision@example.com');
    const accountId: string = (await getOp(c, id)).account.id;
    await terminateByHand(operationWorkflowId(id));
    // As a decision was recorded before its signal carried a start: its signal finds the workflow closed, and is
    // dropped. The withdrawal stays ON_HOLD with a decision recorded.
    expect(await dropRecordedReject(c.customerId, id)).to.equal('closed');
    expect((await getOp(c, id)).currentState.status).to.equal('ON_HOLD');

    // Another decision is refused, naming the one recorded; the same one again applies it.
    const other = await cambioFails('withdrawal', 'approve', id);
    expect([other.body.code, other.body.details]).to.deep.equal([
      'INVALID_STATE',
      { status: 'DECIDED', decision: 'REJECT' },
    ]);
    const rejected = await cambio('withdrawal', 'reject', id);
    expect(rejected.stdout.trim()).to.equal(`operation ${id} is FAILED`);
    expect((await getOp(c, id)).currentState.reason?.message).to.equal('dropped');
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '60000.00', held: '0.00' });
    const again = await cambioFails('withdrawal', 'reject', id);
    expect(again.body.message).to.equal(`operation is WITHDRAWAL in FAILED; this needs a WITHDRAWAL ON_HOLD`);
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '60000.00', held: '0.00' });
    await assertLedgerBalanced();
  });

  // The same decision taken again through the sandbox route (the customer's review) sends the one recorded; the same
  // request retried after its COMMIT, its answer never stored (its API process died, or the retry reached another
  // process first), is that request again: 200, not 409 for a review its own first try decided (decision 0345).
  it('the same decision again, retried with its key after its answer was lost, answers 200 once more', async () => {
    const { services, http } = await stack();
    const c = await newCustomer();
    const id = await heldWithdrawal(c, 'requeue-retry@example.com');
    const accountId: string = (await getOp(c, id)).account.id;
    await terminateByHand(operationWorkflowId(id));
    expect(await dropRecordedReject(c.customerId, id)).to.equal('closed');

    const key = randomUUID();
    const review = () =>
      http
        .post(`/api/sandbox/operations/${id}/hold-review`)
        .set(c.auth)
        .set('X-Idempotency-Key', key)
        .send({ decision: 'REJECT' });
    const first = await review();
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    expect(first.body.currentState.status).to.equal('FAILED');
    // Its answer lost: as if the process died after the decision's COMMIT, before it stored the answer (the key's row
    // as the request's start wrote it).
    await systemEm(services.orm).execute(
      `update idempotency_keys set state = 'STARTED', response_status = null, response_body = null
       where customer_id = ? and key = ?`,
      [c.customerId, key],
    );
    const retried = await review();
    expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
    expect(retried.body).to.deep.include({ id });
    expect(retried.body.currentState.status).to.equal('FAILED');
    expect(await balance(c, accountId, 'BRL')).to.include({ available: '60000.00', held: '0.00' });
    await assertLedgerBalanced();
  });

  it('an instruction whose review workflow was terminated is approved, once', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const created = await http
      .post('/api/beneficiaries')
      .set(c.auth)
      .set(idem())
      .send(beneficiaryBody(pixInstruction('EMAIL', 'terminated-review@example.com')));
    expect(created.status).to.equal(201);
    const instructionId: string = created.body.paymentInstructions[0].id;
    await terminateByHand(instructionReviewWorkflowId(instructionId));

    const approved = await cambio('instruction', 'approve', instructionId);
    expect(approved.stdout.trim()).to.equal(`instruction ${instructionId} APPROVED (beneficiary ${created.body.id})`);
    const beneficiary = await eventually(
      async () => (await http.get(`/api/beneficiaries/${created.body.id}`).set(c.auth)).body,
      (b) => b.paymentInstructions?.[0]?.currentState?.status === 'APPROVED',
    );
    expect(beneficiary.paymentInstructions[0].currentState.status).to.equal('APPROVED');
    const again = await cambioFails('instruction', 'reject', instructionId, '--reason', 'second thoughts');
    expect(again.body.code).to.equal('INVALID_STATE');
    expect(again.body.message).to.equal(
      'payment instruction is APPROVED; only a PENDING_REVIEW instruction can be reviewed',
    );
  });
});
