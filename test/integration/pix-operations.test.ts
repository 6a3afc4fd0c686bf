// The operations side of the PIX rail, against the run's simulated PSP over HTTP: reconciliation as a Temporal
// Schedule finds what no notice brought (and the deposit completes), returns go through `devolucao` and stay
// RETURNING until the PSP answers DEVOLVIDO (RETURNED) or NAO_REALIZADO (UNMATCHED again, with its reason).
import { expect } from 'chai';
import type { Client } from '@temporalio/client';
import { systemEm } from '../../db/orm';
import { findPaymentByReference } from '../../db/repositories/inbound-payments';
import { presentInboundPayment } from '../../presenters/inbound-payment';
import { returnPayment } from '../../services/inbound-payment-resolution';
import type { CambioError } from '../../domain/errors';
import { ensureSchedules, periodicJobs, scheduleId } from '../../worker/schedules';
import { reconcileRail, type ReconcileResult } from '../../payments/reconciliation';
import type { TimeWindow } from '../../rails/rail';
import { cambioWith } from '../helpers/cli';
import { activeAccount } from '../helpers/fixtures';
import { openDeposit, spiEndToEndId } from '../helpers/inbound-payments';
import { assertLedgerBalanced, balance, getOp, untilStatus } from '../helpers/money';
import { eventually, newCustomer, simulatorEnv, stack } from '../helpers/stack';

/** The platform's suspense (payments nobody could attribute) for one asset. */
async function platformSuspense(): Promise<string> {
  const { services } = await stack();
  const sql = `select coalesce(sum(available), 0)::numeric(38,2)::text as s from balances
               where account_id = md5('suspense:platform')::uuid and asset = 'BRL'`;
  return (await systemEm(services.orm).execute(sql))[0].s;
}

describe('PIX operations: reconciliation and returns through the PSP', function () {
  this.timeout(120000);
  let client: Client;
  const json = async (...args: string[]) => JSON.parse((await cambioWith(simulatorEnv(), ...args, '--json')).stdout);
  const record = async (e2e: string) => {
    const { services } = await stack();
    return findPaymentByReference(systemEm(services.orm), 'PIX_KEY', e2e);
  };
  const paidAtPsp = async (body: Record<string, unknown>) => {
    const res = await (await stack()).psp.control('POST', '/pix', body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.endToEndId as string;
  };
  const returnsAtPsp = async (e2e: string) => {
    const state = (await (await stack()).psp.control('GET', '/state')).body;
    return state.received.find((p: { endToEndId: string }) => p.endToEndId === e2e).devolucoes as any[];
  };
  // Two Pix to the receiving key with no charge and no notice: reconciliation leaves them in the platform's
  // suspense, for the return tests.
  const unattributed: string[] = [];

  before(async () => {
    const s = await stack();
    client = s.services.temporal;
    // Every schedule of this run's deployment, as a worker creates them at start (the PSP is configured).
    await ensureSchedules(client, s.config);
  });

  after(async () => {
    const s = await stack();
    for (const job of periodicJobs(s.config)) {
      await client.schedule
        .getHandle(job.id)
        .delete()
        .catch(() => undefined);
    }
  });

  it('a Pix no notice brought: a triggered reconciliation run records it once and the deposit completes', async () => {
    const { config, psp } = await stack();
    const listed = await json('schedule', 'list');
    const job = listed.find((r: { id: string }) => r.id === scheduleId(config, 'pix-reconciliation'));
    expect(job).to.deep.include({ workflowType: 'pixReconciliationWorkflow', paused: false });
    expect(job.note).to.include('PIX_RECONCILE_EVERY_SECONDS=300');
    // Paused, so that only the runs this test triggers record anything (a trigger runs a paused schedule too).
    await client.schedule.getHandle(job.id).pause('test: runs triggered by hand');
    const c = await newCustomer('Reconciled Ltda');
    const account = await activeAccount(c, ['BRL']);
    const deposit = await openDeposit(c, account.id, '40.00');
    // The deposit's charge, created at the PSP by the deposit POST.
    const txid: string = (await getOp(c, deposit.id)).intent.fundingInstruction.txid;
    expect(txid, 'the PIX deposit names its charge').to.be.a('string');
    const e2e = await paidAtPsp({ txid, notices: 0, pagador: { nome: 'Fulano', cpf: '12345678909' } });
    unattributed.push(await paidAtPsp({ valor: '15.00', chave: config.pix.receivingKey, notices: 0 }));
    unattributed.push(await paidAtPsp({ valor: '9.00', chave: config.pix.receivingKey, notices: 0 }));
    expect(
      (await psp.control('GET', '/state')).body.delivered.map((d: any) => d.body.pix[0].endToEndId),
    ).to.not.include(e2e);
    expect(await record(e2e), 'no notice, no record').to.equal(null);

    const first = await triggeredRun();
    expect(first.late, JSON.stringify(first)).to.be.at.least(3);
    expect(first.failed).to.deep.equal([]);
    const done = await untilStatus(c, deposit.id, 'COMPLETED');
    expect(done.transactions).to.have.length(1);
    expect(done.transactions[0]).to.deep.include({ direction: 'CREDIT', status: 'COMPLETED' });
    expect((await balance(c, account.id, 'BRL')).available).to.equal('40.00');
    const matched = (await record(e2e))!;
    expect(matched).to.deep.include({ status: 'MATCHED', operationId: deposit.id, customerId: c.customerId });
    for (const other of unattributed)
      expect((await record(other))!).to.deep.include({ status: 'UNMATCHED', customerId: null });

    // The next run's window overlaps the last: it lists them again and records nothing twice.
    const second = await triggeredRun();
    expect(Date.parse(second.windowStart)).to.be.below(Date.parse(first.windowEnd));
    expect(second.listed).to.be.at.least(3);
    expect((await record(e2e))!.id).to.equal(matched.id);
    const rows = await systemEm((await stack()).services.orm).execute(
      `select count(*)::int as n from inbound_payments where end_to_end_id = ?`,
      [e2e],
    );
    expect(rows[0].n).to.equal(1);
    expect((await balance(c, account.id, 'BRL')).available).to.equal('40.00');
    await assertLedgerBalanced();
  });

  it('a return through devolucao: RETURNING, then RETURNED with its end-to-end id once the PSP confirms', async () => {
    const payment = (await record(unattributed[0]))!;
    const suspenseBefore = await platformSuspense();
    const asked = await json('payment', 'return', payment.id, '--reason', 'nobody asked for it');
    expect(asked).to.deep.include({ id: payment.id, status: 'RETURNING' });
    // What `cambio payment list` and GET /api/inbound-payments show (read in-process: a CLI run costs seconds).
    const returned = await eventually(
      async () => presentInboundPayment((await record(payment.endToEndId))!),
      (p) => p.status === 'RETURNED',
      30000,
      100,
    );
    const devolucoes = await returnsAtPsp(payment.endToEndId);
    expect(devolucoes, 'one return at the PSP').to.have.length(1);
    expect(devolucoes[0]).to.deep.include({
      valor: '15.00',
      status: 'DEVOLVIDO',
      descricao: 'nobody asked for it',
    });
    expect(returned.returned).to.deep.equal({
      endToEndId: devolucoes[0].rtrId,
      reason: 'nobody asked for it',
      failure: null,
    });
    expect(await platformSuspense()).to.equal((Number(suspenseBefore) - 15).toFixed(2));
    // Asked again: nothing more goes back.
    const { services } = await stack();
    const again = await returnPayment(services, payment.id, 'again').catch((e: CambioError) => e);
    expect((again as CambioError).code).to.equal('INVALID_STATE');
    const after = await returnsAtPsp(payment.endToEndId);
    expect(after).to.have.length(1);
  });

  it('NAO_REALIZADO: UNMATCHED again with the reason; a later return has an id of its own', async () => {
    const { psp } = await stack();
    const payment = (await record(unattributed[1]))!;
    const suspenseBefore = await platformSuspense();
    await psp.control('POST', '/return-rules', {
      endToEndId: payment.endToEndId,
      status: 'NAO_REALIZADO',
      motivo: 'conta do pagador encerrada',
    });
    expect(await json('payment', 'return', payment.id, '--reason', 'unknown payer')).to.deep.include({
      status: 'RETURNING',
    });
    const refused = await eventually(
      async () => presentInboundPayment((await record(payment.endToEndId))!),
      (p) => p.status === 'UNMATCHED',
      30000,
      100,
    );
    expect(refused.returned).to.deep.include({ reason: 'unknown payer', failure: 'conta do pagador encerrada' });
    expect(await platformSuspense()).to.equal(suspenseBefore);

    await psp.control('POST', '/return-rules', { endToEndId: payment.endToEndId, status: 'DEVOLVIDO' });
    const { services } = await stack();
    expect(await returnPayment(services, payment.id, 'second try')).to.deep.include({ status: 'RETURNING' });
    await eventually(
      async () => (await record(payment.endToEndId))!.status,
      (s) => s === 'RETURNED',
      30000,
      250,
    );
    const devolucoes = await returnsAtPsp(payment.endToEndId);
    expect(devolucoes.map((d: any) => d.status)).to.deep.equal(['NAO_REALIZADO', 'DEVOLVIDO']);
    expect(new Set(devolucoes.map((d: any) => d.id)).size).to.equal(2);
    expect(await platformSuspense()).to.equal((Number(suspenseBefore) - 9).toFixed(2));
    await assertLedgerBalanced();
  });

  it('a return the PSP answered 202 without taking it: asked again under its id, RETURNED, one return', async () => {
    const { psp, config, services } = await stack();
    const res = await psp.control('POST', '/pix', { valor: '6.00', chave: config.pix.receivingKey });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const e2e: string = res.body.endToEndId;
    const payment = await eventually(
      () => record(e2e),
      (p) => p?.status === 'UNMATCHED',
      30000,
      100,
    );
    // Decision 0108: a 202 is no refusal. Its read-back finds nothing, so the same PUT goes again (failing it would
    // put the payment back UNMATCHED while a PSP that took it sends the money back).
    const fault = { method: 'PUT', pathPrefix: `/pix/${e2e}/devolucao/`, status: 202, body: '', count: 1 };
    expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);
    expect(await returnPayment(services, payment!.id, 'sent back')).to.deep.include({ status: 'RETURNING' });
    const returned = await eventually(
      async () => presentInboundPayment((await record(e2e))!),
      (p) => p.status !== 'RETURNING',
      30000,
      250,
    );
    expect(returned.status, JSON.stringify(returned.returned)).to.equal('RETURNED');
    const devolucoes = await returnsAtPsp(e2e);
    expect(devolucoes).to.have.length(1);
    expect(devolucoes[0]).to.deep.include({ valor: '6.00', status: 'DEVOLVIDO' });
    await assertLedgerBalanced();
  });

  it("a return the PSP refuses: UNMATCHED, its failure names the refused field, never the PSP's words", async () => {
    const { psp, config, services } = await stack();
    const res = await psp.control('POST', '/pix', { valor: '7.00', chave: config.pix.receivingKey });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const e2e: string = res.body.endToEndId;
    const payment = await eventually(
      () => record(e2e),
      (p) => p?.status === 'UNMATCHED',
      30000,
      100,
    );
    // An API Pix 400 with its violacoes, nothing taken (the read-back under our id finds nothing): a final refusal.
    const problem = {
      type: 'https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida',
      title: 'Devolução inválida.',
      status: 400,
      detail: 'A requisição de devolução não respeita o schema ou as regras do PSP.',
      violacoes: [{ razao: 'Valor excede o saldo da conta transacional', propriedade: 'valor', valor: '7.00' }],
    };
    const fault = { method: 'PUT', pathPrefix: `/pix/${e2e}/devolucao/`, status: 400, body: problem, count: 1 };
    expect((await psp.control('POST', '/faults', fault)).status).to.equal(204);
    expect(await returnPayment(services, payment!.id, 'sent back')).to.deep.include({ status: 'RETURNING' });
    const refused = await eventually(
      async () => presentInboundPayment((await record(e2e))!),
      (p) => p.status !== 'RETURNING',
      30000,
      250,
    );
    expect(refused.status).to.equal('UNMATCHED');
    expect(refused.returned).to.deep.equal({
      endToEndId: null,
      reason: 'sent back',
      failure: 'the PSP refused the return: the PSP refused the amount',
    });
    for (const internal of ['saldo', 'schema', 'Devolução', '/devolucao/', 'HTTP 400', e2e]) {
      expect(JSON.stringify(refused.returned), internal).to.not.contain(internal);
    }
    expect((await returnsAtPsp(e2e)) ?? [], 'nothing returned at the PSP').to.deep.equal([]);
  });

  it("a PSP list with one item it wrote wrongly: the others are recorded, that one is the run's failure", async () => {
    const { services, psp, config } = await stack();
    const c = await newCustomer('Listed Ltda');
    const account = await activeAccount(c, ['BRL']);
    const deposit = await openDeposit(c, account.id, '31.00');
    const txid: string = (await getOp(c, deposit.id)).intent.fundingInstruction.txid;
    const paid = await (await stack()).psp.control('POST', '/pix', { txid, notices: 0 });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(201);
    // The PSP lists the deposit's Pix beside one whose `horario` is no instant (a PSP bug, a half-written record).
    const garbled = { endToEndId: spiEndToEndId(), valor: '2.00', chave: config.pix.receivingKey, horario: 'ontem' };
    await psp.control('POST', '/faults', {
      method: 'GET',
      pathPrefix: '/pix',
      count: 1,
      status: 200,
      body: { parametros: { paginacao: { paginaAtual: 0, quantidadeDePaginas: 1 } }, pix: [garbled, paid.body] },
    });
    const listing = services.rails!.connector('PIX_KEY')!.listing!;
    const settle = { orm: services.orm, temporal: services.temporal, config };
    const run = await reconcileRail(settle, { rail: 'PIX_KEY', listReceived: (w) => listing.listReceived(w) });
    expect(run.failed).to.deep.equal([garbled.endToEndId]);
    expect(run.late).to.equal(1);
    await untilStatus(c, deposit.id, 'COMPLETED');
    expect((await balance(c, account.id, 'BRL')).available).to.equal('31.00');
    expect(await record(garbled.endToEndId), 'never recorded as it stands').to.equal(null);
  });

  it('a window longer than the PSP lists (400) is listed shorter; the runs after catch the backlog up', async () => {
    const { services, psp, config } = await stack();
    const listing = services.rails!.connector('PIX_KEY')!.listing!;
    const settle = { orm: services.orm, temporal: services.temporal, config };
    // A rail name of its own, and days before any Pix of this run: its runs move no other test's window.
    const source = { rail: 'PIX_WINDOW_TEST', listReceived: (w: TimeWindow) => listing.listReceived(w) };
    const day = 24 * 3600 * 1000;
    const now = new Date(Date.now() - 2 * day);
    const span = (r: ReconcileResult) => Date.parse(r.windowEnd) - Date.parse(r.windowStart);
    expect((await psp.control('POST', '/pix-list-window', { maxSeconds: 86400 })).status).to.equal(204);
    try {
      const first = await reconcileRail(settle, source, { now, firstFrom: new Date(now.getTime() - 3 * day) });
      expect(first.narrowedFrom).to.equal(now.toISOString());
      expect(first.refusal).to.match(/HTTP 400/);
      expect(span(first)).to.be.at.most(day);
      const runs = [first];
      while (runs.length < 6 && runs[runs.length - 1].windowEnd !== now.toISOString()) {
        runs.push(await reconcileRail(settle, source, { now }));
      }
      const last = runs[runs.length - 1];
      expect(last.windowEnd, 'caught up').to.equal(now.toISOString());
      for (const [i, run] of runs.entries()) {
        expect(span(run), `run ${i}`).to.be.at.most(day);
        if (i > 0)
          expect(Date.parse(run.windowEnd), `run ${i} moves on`).to.be.above(Date.parse(runs[i - 1].windowEnd));
      }
    } finally {
      await psp.control('POST', '/pix-list-window', {});
    }
  });

  /** A triggered run of the schedule, and its result. */
  async function triggeredRun(): Promise<ReconcileResult> {
    const { config } = await stack();
    const handle = client.schedule.getHandle(scheduleId(config, 'pix-reconciliation'));
    const before = (await handle.describe()).info.numActionsTaken;
    // As `cambio schedule trigger pix-reconciliation` does (each CLI process costs seconds on a loaded machine).
    await handle.trigger();
    const described = await eventually(
      () => handle.describe(),
      (d) => d.info.numActionsTaken > before,
      20000,
      200,
    );
    const run = described.info.recentActions.at(-1)!.action.workflow;
    return client.workflow.getHandle(run.workflowId, run.firstExecutionRunId).result();
  }
});
