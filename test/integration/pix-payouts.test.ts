// Withdrawals pay out through the PSP (the run's simulated PSP, over HTTP): the provider calls run on the rails'
// task queue, the operation completes only on the PSP's REALIZADO, stays PROCESSING while the payout may still
// leave, and a deployment without a PSP refuses PIX outright.
import { expect } from 'chai';
import Decimal from 'decimal.js';
import supertest from 'supertest';
import { createApp } from '../../api/app';
import { OperationSchema } from '../../db/entities';
import { systemEm } from '../../db/orm';
import { payoutIdFor } from '../../rails/pix/ids';
import { withdrawToNewKey } from '../helpers/beneficiary-fixtures';
import { cambio } from '../helpers/cli';
import { activityEnded, historyFixture, scheduledActivities } from '../helpers/histories';
import { activeAccount } from '../helpers/fixtures';
import { balance, fund, getOp, quote, untilStatus } from '../helpers/money';
import { eventually, idem, newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';
import { operationWorkflowId } from '../../workflows/ids';

const payoutsAtPsp = async (idEnvio: string) => {
  const { psp } = await stack();
  const state = (await psp.control('GET', '/state')).body;
  return Object.values(state.payouts as Record<string, any>).filter((p) => p.idEnvio === idEnvio);
};

describe('PIX payouts through the PSP', function () {
  this.timeout(120000);
  let c: TestCustomer;
  let accountId: string;

  before(async () => {
    c = await newCustomer();
    accountId = (await activeAccount(c, ['BRL'] as never)).id;
    await fund(c, accountId, 'BRL', '1000.00');
  });

  it('completes on REALIZADO with the PSP end-to-end id; one payout at the PSP under its idEnvio', async () => {
    const before = await balance(c, accountId, 'BRL');
    const res = await withdrawToNewKey(c, accountId, 'realizado@example.com', '25.00');
    expect(res.status).to.equal(201);
    const done = await untilStatus(c, res.body.id, 'COMPLETED');
    const atPsp = await payoutsAtPsp(payoutIdFor(res.body.id));
    expect(atPsp).to.have.length(1);
    expect(atPsp[0]).to.deep.include({
      valor: '25.00',
      status: 'REALIZADO',
      favorecido: { chave: 'realizado@example.com' },
    });
    expect(done.transactions).to.have.length(1);
    expect(done.transactions[0]).to.deep.include({ direction: 'DEBIT', status: 'COMPLETED' });
    // The API does not show the end-to-end id; the stored transaction (and the webhook payload) carry the PSP's.
    const { services } = await stack();
    const stored = await systemEm(services.orm).findOneOrFail(OperationSchema, { id: res.body.id });
    expect(stored.transactions[0].endToEnd).to.equal(atPsp[0].e2eId);
    expect((await balance(c, accountId, 'BRL')).total).to.equal((Number(before.total) - 25).toFixed(2));
  });

  it('stays PROCESSING with the money held while the PSP has not settled, then completes once it does', async () => {
    const { psp } = await stack();
    const key = 'slow-payee@example.com';
    await psp.control('POST', '/payout-rules', { chave: key, status: 'EM_PROCESSAMENTO' });
    const before = await balance(c, accountId, 'BRL');
    const res = await withdrawToNewKey(c, accountId, key, '10.00');
    const idEnvio = payoutIdFor(res.body.id);
    await eventually(
      () => payoutsAtPsp(idEnvio),
      (p) => p.length === 1,
      20000,
    );
    await new Promise((r) => setTimeout(r, 1500));
    const waiting = await getOp(c, res.body.id);
    expect(waiting.currentState.status).to.equal('PROCESSING');
    expect(waiting.transactions).to.have.length(0);
    expect(await balance(c, accountId, 'BRL')).to.deep.include({
      held: (Number(before.held) + 10).toFixed(2),
      total: before.total,
    });
    // Operators see it: a payout whose money is held and may still leave.
    const stuck = JSON.parse((await cambio('operation', 'list', '--stuck', '--older-than', '0', '--json')).stdout);
    const listed = stuck.find((op: any) => op.id === res.body.id);
    expect(listed).to.deep.include({
      status: 'PROCESSING',
      amount: { value: '10.00', asset: 'BRL' },
    });
    // And the key the payout was sent to (decision 0310).
    expect(listed.payee.paymentInstruction).to.deep.include({ rail: 'PIX_KEY', keyType: 'EMAIL', key });
    expect((await psp.control('POST', `/payouts/${idEnvio}/settle`, { status: 'REALIZADO' })).status).to.equal(204);
    await untilStatus(c, res.body.id, 'COMPLETED', 90000);
    const after = JSON.parse((await cambio('operation', 'list', '--stuck', '--older-than', '0', '--json')).stdout);
    expect(after.map((op: any) => op.id)).to.not.include(res.body.id);
    expect(await payoutsAtPsp(idEnvio)).to.have.length(1);
  });

  it('rides out a PSP that answers 503 for a while: PROCESSING meanwhile, then one payout and COMPLETED', async () => {
    const { psp } = await stack();
    await psp.control('POST', '/faults', { status: 503, pathPrefix: '/v3/gn/pix/', forMs: 2500 });
    const res = await withdrawToNewKey(c, accountId, 'outage@example.com', '5.00');
    await new Promise((r) => setTimeout(r, 1000));
    expect((await getOp(c, res.body.id)).currentState.status).to.equal('PROCESSING');
    await untilStatus(c, res.body.id, 'COMPLETED', 60000);
    expect(await payoutsAtPsp(payoutIdFor(res.body.id))).to.have.length(1);
  });

  it("NAO_REALIZADO: FAILED PAYOUT_REJECTED saying why, not in the PSP's words, and the hold released", async () => {
    const before = await balance(c, accountId, 'BRL');
    const res = await withdrawToNewKey(c, accountId, 'payout-fails@example.com', '12.00');
    const failed = await untilStatus(c, res.body.id, 'FAILED');
    expect(failed.currentState.reason.code).to.equal('PAYOUT_REJECTED');
    // The PSP's motivo ("Chave do favorecido recusada pela instituicao") is the operator's (decision 0319).
    expect(failed.currentState.reason.message).to.equal(
      "the payout was rejected: the PSP did not make the Pix to the payee's PIX key; " +
        'nothing was paid and the hold is released',
    );
    expect((await payoutsAtPsp(payoutIdFor(res.body.id)))[0].status).to.equal('NAO_REALIZADO');
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });

  // Decision 0108: a payout is FAILED only on the PSP's final answer. Each case below made the withdrawal FAILED, its
  // hold released, before (a 202 or a 2xx whose status is not one the PSP names was a refusal), while the PSP paid.
  const plus = (a: string, b: string) => new Decimal(a).plus(b).toFixed(2);
  const minus = (a: string, b: string) => new Decimal(a).minus(b).toFixed(2);

  for (const [what, answer] of [
    ['202 with no body', { status: 202, body: '' }],
    ['201 {"status": "PROCESSANDO"}', { status: 201, body: { status: 'PROCESSANDO' } }],
    ['201 with an empty body', { status: 201, body: '' }],
    ['400 (a refusal, but the PSP took it)', { status: 400, body: { title: 'EnvioInvalido' } }],
  ] as const) {
    it(`a PUT the PSP took, answered ${what}: read back, PROCESSING and held, COMPLETED on REALIZADO`, async () => {
      const { psp } = await stack();
      const key = `answered-${answer.status}-${Date.now()}@example.com`;
      await psp.control('POST', '/payout-rules', { chave: key, status: 'EM_PROCESSAMENTO' });
      const fault = { method: 'PUT', pathPrefix: '/v3/gn/pix/', afterHandling: true, count: 1, ...answer };
      expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);
      const before = await balance(c, accountId, 'BRL');
      const res = await withdrawToNewKey(c, accountId, key, '4.00');
      expect(res.status).to.equal(201);
      const idEnvio = payoutIdFor(res.body.id);
      await eventually(
        () => payoutsAtPsp(idEnvio),
        (p) => p.length === 1,
        20000,
      );
      // Reads back off from 250 ms: by now several have found it pending.
      await new Promise((r) => setTimeout(r, 1500));
      const waiting = await getOp(c, res.body.id);
      expect(waiting.currentState.status).to.equal('PROCESSING');
      expect(waiting.transactions).to.have.length(0);
      expect(await balance(c, accountId, 'BRL')).to.deep.equal({
        available: minus(before.available, '4.00'),
        held: plus(before.held, '4.00'),
        total: before.total,
      });
      expect((await psp.control('POST', `/payouts/${idEnvio}/settle`, { status: 'REALIZADO' })).status).to.equal(204);
      const done = await untilStatus(c, res.body.id, 'COMPLETED', 60000);
      expect(done.transactions[0]).to.deep.include({ direction: 'DEBIT', status: 'COMPLETED' });
      expect(await payoutsAtPsp(idEnvio)).to.have.length(1);
      expect(await balance(c, accountId, 'BRL')).to.deep.equal({
        available: minus(before.available, '4.00'),
        held: before.held,
        total: minus(before.total, '4.00'),
      });
    });
  }

  it('a 202 from a PSP that took nothing: the read-back finds nothing, the same PUT again, one payout', async () => {
    const { psp } = await stack();
    const fault = { method: 'PUT', pathPrefix: '/v3/gn/pix/', status: 202, body: '', count: 1 };
    expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);
    const res = await withdrawToNewKey(c, accountId, `lost-${Date.now()}@example.com`, '2.00');
    const done = await untilStatus(c, res.body.id, 'COMPLETED', 60000);
    const atPsp = await payoutsAtPsp(payoutIdFor(res.body.id));
    expect(atPsp).to.have.length(1);
    expect(done.transactions[0]).to.deep.include({ direction: 'DEBIT', status: 'COMPLETED' });
  });

  it('a 4xx to the PUT and nothing under the idEnvio: FAILED PAYOUT_REJECTED, the hold released', async () => {
    const { psp } = await stack();
    // The PSP names the payee's key among its violations: the customer is told which of its data, not the PSP's words.
    const body = {
      type: 'https://pix.bcb.gov.br/api/v2/error/EnvioInvalido',
      title: 'Envio inválido',
      status: 422,
      detail: 'A requisição não respeita o schema',
      violacoes: [{ razao: 'Chave DICT inexistente no diretorio interno 77', propriedade: 'favorecido.chave' }],
    };
    const fault = { method: 'PUT', pathPrefix: '/v3/gn/pix/', status: 422, count: 1, body };
    expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);
    const before = await balance(c, accountId, 'BRL');
    const res = await withdrawToNewKey(c, accountId, `refused-${Date.now()}@example.com`, '3.00');
    const failed = await untilStatus(c, res.body.id, 'FAILED');
    expect(failed.currentState.reason.code).to.equal('PAYOUT_REJECTED');
    expect(failed.currentState.reason.message).to.equal(
      "the payout was rejected: the PSP refused the payee's PIX key; nothing was paid and the hold is released",
    );
    expect(await payoutsAtPsp(payoutIdFor(res.body.id))).to.deep.equal([]);
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });

  // The second answer: a refusal (decision 0159), or a 200 "not made" (decision 0327).
  for (const [answered, second] of [
    ['a 4xx', { status: 422 }],
    ['NAO_REALIZADO', { status: 200, body: { status: 'NAO_REALIZADO', motivo: 'Chave invalida' } }],
  ] as const)
    it(`${answered} to a retried PUT the PSP took before: PROCESSING and held, then COMPLETED once`, async () => {
      const { psp, services } = await stack();
      const key = `retried-${Date.now()}@example.com`;
      await psp.control('POST', '/payout-rules', { chave: key, status: 'EM_PROCESSAMENTO' });
      // The send's first attempt: the PSP takes the PUT but answers 503, and its read side does not show it yet (404),
      // so the activity is retried. Its second attempt: the PSP refuses the repeated idEnvio (422) or answers it "not
      // made", still showing nothing. Neither is a final answer: the first PUT may pay.
      for (const fault of [
        { method: 'PUT', pathPrefix: '/v3/gn/pix/', afterHandling: true, status: 503, count: 1 },
        { method: 'GET', pathPrefix: '/v2/gn/pix/enviados/id-envio/', status: 404, count: 2 },
        { method: 'PUT', pathPrefix: '/v3/gn/pix/', ...second, count: 1 },
      ]) {
        expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);
      }
      const before = await balance(c, accountId, 'BRL');
      const res = await withdrawToNewKey(c, accountId, key, '6.00');
      expect(res.status).to.equal(201);
      // Until the send has its answer: a result (its third attempt reads the payout back), or a failure.
      const handle = services.temporal.workflow.getHandle(operationWorkflowId(res.body.id));
      const send = await eventually(
        () => activityEnded(handle, 'railSendPayout'),
        (ended) => ended !== undefined,
        30000,
      );
      expect(send, 'the refusal of the retried PUT is retried, not final').to.equal('COMPLETED');
      const waiting = await getOp(c, res.body.id);
      expect(waiting.currentState.status).to.equal('PROCESSING');
      expect(await balance(c, accountId, 'BRL')).to.deep.equal({
        available: minus(before.available, '6.00'),
        held: plus(before.held, '6.00'),
        total: before.total,
      });
      const idEnvio = payoutIdFor(res.body.id);
      expect((await psp.control('POST', `/payouts/${idEnvio}/settle`, { status: 'REALIZADO' })).status).to.equal(204);
      await untilStatus(c, res.body.id, 'COMPLETED', 60000);
      expect(await payoutsAtPsp(idEnvio)).to.have.length(1);
      expect((await balance(c, accountId, 'BRL')).total).to.equal(minus(before.total, '6.00'));
    });

  it('replays a withdrawal recorded before decision 0108: sent, read by pixPayoutStatus, then paid', async () => {
    await stack(); // installs the SDK runtime with its quiet logger before the replay worker
    const history = historyFixture('withdrawal-pix-pending-status-reads.binpb');
    const scheduled = scheduledActivities(history);
    expect(scheduled[0]).to.equal('pixSendPayout');
    expect(scheduled.filter((t) => t === 'pixPayoutStatus').length).to.be.at.least(2);
    await replayOnCurrentCode(history, 'before-0108');
  });

  // The deployment's own receiving key (PIX_RECEIVING_KEY, shown in every PIX deposit's funding instruction) is no
  // payee: a payout to it leaves Cambio's account for Cambio's account, the customer's balance is debited for money
  // nobody received, and what arrives is a Pix no deposit is owed (decision 0312; the hot wallet's rule, 0183).
  it("refuses Cambio's own receiving key as a payee: 400 for the instruction, in any letter case", async () => {
    const { http, services } = await stack();
    const own = services.config.pix.receivingKey;
    const { beneficiaryBody, pixInstruction } = await import('../helpers/beneficiary-fixtures');
    const res = await http
      .post('/api/beneficiaries')
      .set(c.auth)
      .set(idem())
      .send(beneficiaryBody(pixInstruction(services.config.pix.receivingKeyType as never, own.toUpperCase())));
    expect([res.status, res.body.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
    expect(res.body.details.errors[0].path).to.equal('/paymentInstruction/dictKey');
  });

  it('a payout to the receiving key approved before: FAILED, nothing sent, the hold released', async () => {
    const { services } = await stack();
    const own = services.config.pix.receivingKey;
    // An API that knew another receiving key took the instruction, as one did before this rule or before a key change.
    const config = { ...services.config, pix: { ...services.config.pix, receivingKey: 'earlier-key@example.com' } };
    const earlier = supertest(createApp({ ...services, config }).callback());
    const { beneficiaryBody, pixInstruction, referenceBeneficiary } = await import('../helpers/beneficiary-fixtures');
    const created = await earlier
      .post('/api/beneficiaries')
      .set(c.auth)
      .set(idem())
      .send(beneficiaryBody(pixInstruction(services.config.pix.receivingKeyType as never, own)));
    expect(created.status).to.equal(201);
    const instructionId = created.body.paymentInstructions[0].id;
    const review = await earlier
      .post(`/api/sandbox/payment-instructions/${instructionId}/review`)
      .set(c.auth)
      .set(idem())
      .send({ decision: 'APPROVE' });
    expect(review.status).to.equal(200);
    const before = await balance(c, accountId, 'BRL');
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '7.00' });
    const res = await earlier
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(idem())
      .send({ accountId, quoteId: q.id, beneficiary: referenceBeneficiary(created.body.id, instructionId) });
    expect(res.status).to.equal(201);
    const failed = await untilStatus(c, res.body.id, 'FAILED');
    expect(failed.currentState.reason.code).to.equal('PAYOUT_REJECTED');
    expect(failed.currentState.reason.message).to.equal(
      "the payout was rejected: the payee's PIX key is Cambio's own receiving key; " +
        'nothing was paid and the hold is released',
    );
    expect(await payoutsAtPsp(payoutIdFor(res.body.id))).to.have.length(0);
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });

  it('SANDBOX on and no PSP: a PIX withdrawal is 422 RAIL_NOT_CONFIGURED, nothing held', async () => {
    const { services } = await stack();
    const config = { ...services.config, sandbox: true, pix: { ...services.config.pix, pspUrl: undefined } };
    const sandbox = supertest(createApp({ ...services, config }).callback());
    const before = await balance(c, accountId, 'BRL');
    const out = await withdrawToNewKey(c, accountId, 'nobody-sandbox@example.com', '3.00', sandbox);
    expect(out.status).to.equal(422);
    expect(out.body.code).to.equal('RAIL_NOT_CONFIGURED');
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });

  it('SANDBOX off and no PSP: PIX deposit and withdrawal are 422 RAIL_NOT_CONFIGURED, nothing held', async () => {
    const { services } = await stack();
    const config = {
      ...services.config,
      sandbox: false,
      pix: { ...services.config.pix, pspUrl: undefined },
      boleto: { ...services.config.boleto, bankUrl: undefined },
    };
    const live = supertest(createApp({ ...services, config }).callback());
    const before = await balance(c, accountId, 'BRL');
    const out = await withdrawToNewKey(c, accountId, 'nobody@example.com', '3.00', live);
    expect(out.status).to.equal(422);
    expect(out.body.code).to.equal('RAIL_NOT_CONFIGURED');
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '3.00' });
    const dep = await live
      .post('/api/operations/deposit')
      .set(c.auth)
      .set(idem())
      .send({ accountId, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } });
    expect(dep.status).to.equal(422);
    expect(dep.body.code).to.equal('RAIL_NOT_CONFIGURED');
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
    const ready = await live.get('/readyz');
    expect(ready.body.rails).to.deep.include({ PIX_KEY: 'not configured', BOLETO: 'manual' });
    expect((await (await stack()).http.get('/readyz')).body.rails.PIX_KEY).to.equal('psp');
  });
});
