// BOLETO deposits through the bank's collection API (Inter Cobrança v3 shape), real processes only: the deposit POST
// registers the boleto at the run's simulated bank (psp-simulator/bank-boleto/, a child process) and checks its codes
// before it answers; the bank's notices come back over HTTP and are read back before they are money; reconciliation
// lists what no notice brought; an unpaid window cancels the boleto at the bank; the books close.
import { isValidBoleto } from '@brazilian-utils/brazilian-utils';
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { checkBooks } from '../../payments/books-check';
import { reconcileRail } from '../../payments/reconciliation';
import { dueDateFactor } from '../../rails/boleto/codes';
import { BoletoRail } from '../../rails/boleto/connector';
import { activeAccount } from '../helpers/fixtures';
import { openDeposit, pay } from '../helpers/inbound-payments';
import { quote, untilStatus } from '../helpers/money';
import { eventually, newCustomer, stack, type TestCustomer } from '../helpers/stack';

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  const { services } = await stack();
  return (await systemEm(services.orm).execute(query, params)) as T[];
}

const paymentsWith = (reference: string) =>
  sql<{ status: string; customer_id: string | null; operation_id: string | null; amount: string }>(
    `select status, customer_id, operation_id, amount::numeric(20, 2)::text as amount
     from inbound_payments where rail = 'BOLETO' and end_to_end_id = ?`,
    [reference],
  );

const depositsOf = (accountId: string) =>
  sql<{ id: string }>(`select id from operations where account_id = ? and type = 'DEPOSIT'`, [accountId]);

/** The simulated bank's record of the boleto registered under `seuNumero`. */
async function atBank(seuNumero: string) {
  const { psp } = await stack();
  const res = await psp.control('GET', `/boleto/boletos/${seuNumero}`);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body as { cobranca: { codigoSolicitacao: string; situacao: string } };
}

/** What a payer's bank does: pays the boleto (the bank then sends its notice, `notices` copies of it). */
async function payAtBank(body: Record<string, unknown>): Promise<string> {
  const { psp } = await stack();
  const res = await psp.control('POST', '/boleto/pay', body);
  expect(res.status, JSON.stringify(res.body)).to.equal(200);
  return res.body.cobranca.codigoSolicitacao;
}

/** Notices the bank still holds for a boleto: none once every copy was answered 2xx. */
async function noticesPending(codigo: string): Promise<number> {
  const { psp } = await stack();
  const state = (await psp.control('GET', '/boleto/state')).body as { notices: { id: string }[] };
  return state.notices.filter((n) => n.id.startsWith(codigo)).length;
}

const BOLETOS = '/cobranca/v3/cobrancas';

/** The bank registers the next boleto, then answers its POST with `answer` (a status, a body) instead of its own. */
async function bankRegistersThenAnswers(answer: { status: number; body?: unknown }): Promise<void> {
  const { psp } = await stack();
  await psp.control('POST', '/faults', {
    method: 'POST',
    pathPrefix: BOLETOS,
    afterHandling: true,
    count: 1,
    ...answer,
  });
}

/** The bank's next list of boletos answers `body` (200). */
async function bankListsNext(body: unknown): Promise<void> {
  const { psp } = await stack();
  await psp.control('POST', '/faults', { method: 'GET', pathPrefix: BOLETOS, status: 200, body, count: 1 });
}

/** How many boletos the simulated bank holds under `seuNumero`. */
async function boletosUnder(seuNumero: string): Promise<number> {
  const { psp } = await stack();
  const state = (await psp.control('GET', '/boleto/state')).body as { boletos: { seuNumero: string }[] };
  return state.boletos.filter((b) => b.seuNumero === seuNumero).length;
}

describe('BOLETO deposits through the bank: registration, notices, reconciliation, cancel', function () {
  this.timeout(120000);
  let c: TestCustomer;
  let accountId: string;

  const postDeposit = async (value: string, key = randomUUID()) => {
    const { http } = await stack();
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
    const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'BOLETO' } };
    const send = () => http.post('/api/operations/deposit').set(c.auth).set('X-Idempotency-Key', key).send(body);
    return { send, res: await send() };
  };

  before(async () => {
    c = await newCustomer('Boleto Deposits Ltda');
    accountId = (await activeAccount(c, ['BRL'])).id;
  });

  after(async () => {
    const { psp } = await stack();
    await psp.control('DELETE', '/faults');
  });

  it('answers codes whose check digits, amount and due-date factor are the deposit’s; paid, it completes', async () => {
    const { res, send } = await postDeposit('1234.56');
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const i = res.body.intent.fundingInstruction;
    expect(Object.keys(i).sort()).to.deep.equal(
      ['barcode', 'digitableLine', 'dueDate', 'pixCopiaECola', 'rail', 'seuNumero'].sort(),
    );
    expect(i.barcode).to.match(/^\d{44}$/);
    expect(i.digitableLine).to.match(/^\d{47}$/);
    expect(isValidBoleto(i.digitableLine)).to.equal(true);
    expect(i.barcode.slice(9, 19)).to.equal('0000123456');
    expect(i.barcode.slice(5, 9)).to.equal(dueDateFactor(i.dueDate));
    const tomorrow = new Date(Date.now() - 3 * 3_600_000 + 86_400_000).toISOString().slice(0, 10);
    expect(i.dueDate >= tomorrow, `${i.dueDate} is at least the next business day`).to.equal(true);
    expect(i.pixCopiaECola)
      .to.match(/^000201/)
      .and.include('54071234.56');
    // The retry of the same request is the same boleto at the bank.
    const again = await send();
    expect(again.body.intent.fundingInstruction).to.deep.equal(i);

    const paid = await pay(c, res.body.id, '1234.56');
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    const codigo = (await atBank(i.seuNumero)).cobranca.codigoSolicitacao;
    expect(paid.body).to.deep.include({ status: 'MATCHED', rail: 'BOLETO', endToEndId: codigo });
    const done = await untilStatus(c, res.body.id, 'COMPLETED');
    expect(done.transactions.map((t: { amount: { value: string } }) => t.amount.value)).to.deep.equal(['1234.56']);
  });

  it('a deposit above what a barcode carries (99999999.99) is 422 RAIL_REJECTED: no boleto, no operation', async () => {
    const { psp } = await stack();
    const boletos = async () => ((await psp.control('GET', '/boleto/state')).body as { boletos: unknown[] }).boletos;
    const before = { deposits: (await depositsOf(accountId)).length, boletos: (await boletos()).length };
    const { res } = await postDeposit('100000000.00');
    expect(res.status, JSON.stringify(res.body)).to.equal(422);
    expect(res.body.code).to.equal('RAIL_REJECTED');
    expect(res.body.message).to.contain('99999999.99');
    expect((await depositsOf(accountId)).length).to.equal(before.deposits);
    expect((await boletos()).length, 'the bank was not asked').to.equal(before.boletos);
    // The most a barcode carries is a boleto like any other.
    const most = (await postDeposit('99999999.99')).res;
    expect(most.status, JSON.stringify(most.body)).to.equal(201);
    expect(most.body.intent.fundingInstruction.barcode.slice(9, 19)).to.equal('9999999999');
  });

  it('a sandbox payment of more than a boleto carries is 400 INVALID_AMOUNT, and the bank is not asked', async () => {
    // The bank's amounts have at most 13 digits before the point: paid at the simulated bank, its notice is refused
    // and no run can record it, so it would be a 503 for good and a reconciliation failure at every run.
    const { res } = await postDeposit('70.00');
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const paid = await pay(c, res.body.id, '12345678901234.00');
    expect(paid.status, JSON.stringify(paid.body)).to.equal(400);
    expect(paid.body.code).to.equal('INVALID_AMOUNT');
    expect((await atBank(res.body.intent.fundingInstruction.seuNumero)).cobranca.situacao).to.equal('A_RECEBER');
  });

  it('a bank that is down is 503 with Retry-After and no operation', async () => {
    const { psp } = await stack();
    const before = (await depositsOf(accountId)).length;
    await psp.control('POST', '/faults', { status: 503, pathPrefix: BOLETOS, count: 1 });
    const { res, send } = await postDeposit('20.00');
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    expect(res.body.code).to.equal('SERVICE_UNAVAILABLE');
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
    expect(await depositsOf(accountId)).to.have.length(before);
    expect((await send()).status, 'the retry once the bank is back').to.equal(201);
  });

  it('a bank that took the boleto but answers nothing readable is 503; the retry shows that boleto', async () => {
    const before = (await depositsOf(accountId)).length;
    // The bank registers the boleto and answers 200 with no body; its list, asked where the boleto is, does the same.
    await bankRegistersThenAnswers({ status: 200, body: '' });
    await bankListsNext('');
    const { res, send } = await postDeposit('25.00');
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    expect(res.body.code).to.equal('SERVICE_UNAVAILABLE');
    expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
    expect(await depositsOf(accountId)).to.have.length(before);
    const again = await send();
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
    const { seuNumero } = again.body.intent.fundingInstruction;
    expect(await boletosUnder(seuNumero), 'the boleto the first try registered').to.equal(1);
  });

  it('a retry the bank refuses as a duplicate it does not list yet is 503, never a reused key', async () => {
    const before = (await depositsOf(accountId)).length;
    // The first try: the bank registers the boleto and answers 503.
    await bankRegistersThenAnswers({ status: 503 });
    const { res, send } = await postDeposit('26.00');
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    // The retry: the bank refuses the seuNumero it holds (409), and its list does not show that boleto yet.
    await bankListsNext({ cobrancas: [], totalPaginas: 1, ultimaPagina: true });
    const retry = await send();
    expect(retry.status, JSON.stringify(retry.body)).to.equal(503);
    expect(retry.body.code).to.equal('SERVICE_UNAVAILABLE');
    expect(Number(retry.headers['retry-after'])).to.be.greaterThan(0);
    expect(await depositsOf(accountId)).to.have.length(before);
    // Once the bank lists it, the same key opens the deposit with the boleto the first try registered.
    const last = await send();
    expect(last.status, JSON.stringify(last.body)).to.equal(201);
    expect(await boletosUnder(last.body.intent.fundingInstruction.seuNumero)).to.equal(1);
  });

  // The boleto is in the owner's name, so its bank lists it to the owner (DDA), who may pay it before the client's
  // retry reads it back: that boleto takes no more payment, and no deposit is opened on it (decision 0329).
  it('a retry whose boleto the bank shows paid is 422, no deposit; a new key, a new boleto', async () => {
    const { psp } = await stack();
    const before = (await depositsOf(accountId)).length;
    await bankRegistersThenAnswers({ status: 503 });
    const { res, send } = await postDeposit('27.13');
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    const state = (await psp.control('GET', '/boleto/state')).body as {
      boletos: { seuNumero: string; valorNominal: string }[];
    };
    const registered = state.boletos.filter((b) => Number(b.valorNominal) === 27.13);
    expect(registered).to.have.length(1);
    expect(
      (await psp.control('POST', '/boleto/pay', { seuNumero: registered[0].seuNumero, notices: 0 })).status,
    ).to.equal(200);
    const retry = await send();
    expect([retry.status, retry.body.code], JSON.stringify(retry.body)).to.deep.equal([422, 'RAIL_REJECTED']);
    expect(await depositsOf(accountId)).to.have.length(before);
    const fresh = await postDeposit('27.13');
    expect(fresh.res.status, JSON.stringify(fresh.res.body)).to.equal(201);
    expect(fresh.res.body.intent.fundingInstruction.seuNumero).to.not.equal(registered[0].seuNumero);
  });

  it('two deposits on one quote: the refused one’s boleto is cancelled, the other stays payable', async () => {
    const { http, psp } = await stack();
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '27.00' });
    const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'BOLETO' } };
    // The bank answers each registration 300 ms late: both requests have registered a boleto before either commits.
    const slow = { method: 'POST', pathPrefix: BOLETOS, hangMs: 300, afterHandling: true, count: 2 };
    await psp.control('POST', '/faults', slow);
    const post = () =>
      http.post('/api/operations/deposit').set(c.auth).set('X-Idempotency-Key', randomUUID()).send(body);
    const answers = await Promise.all([post(), post()]);
    const won = answers.find((r) => r.status === 201);
    const lost = answers.find((r) => r.status !== 201);
    expect(lost?.body.code, JSON.stringify(answers.map((r) => r.body))).to.equal('QUOTE_ALREADY_CONSUMED');
    const state = (await psp.control('GET', '/boleto/state')).body as {
      boletos: { seuNumero: string; valorNominal: string }[];
    };
    const registered = state.boletos.filter((b) => b.valorNominal === '27.00').map((b) => b.seuNumero);
    expect(registered, 'a boleto per request').to.have.length(2);
    const shown = won!.body.intent.fundingInstruction.seuNumero;
    const orphan = registered.find((s) => s !== shown)!;
    // Never shown, but registered in the customer's name (their bank lists it to pay): it must not stay payable.
    await eventually(
      () => atBank(orphan),
      (b) => b.cobranca.situacao === 'CANCELADO',
      20000,
      100,
    );
    expect((await atBank(shown)).cobranca.situacao).to.equal('A_RECEBER');
  });

  it('a notice twice credits once; a forged or unconfirmed notice records nothing', async () => {
    const { noticeBaseUrl, config } = await stack();
    const { res } = await postDeposit('30.00');
    const seuNumero = res.body.intent.fundingInstruction.seuNumero;
    const notice = (token: string, body: unknown) =>
      fetch(`${noticeBaseUrl}/rails/boleto/${token}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const token = config.boleto.webhookToken;
    const unpaid = (await atBank(seuNumero)).cobranca.codigoSolicitacao;
    const claim = (codigo: string) => [
      { codigoSolicitacao: codigo, seuNumero, situacao: 'RECEBIDO', valorTotalRecebido: '30.00' },
    ];
    expect((await notice('wrong-token', claim(unpaid))).status).to.equal(401);
    // Issued but not paid: the bank says A_RECEBER. Never issued: the bank has no such boleto.
    expect((await notice(token, claim(unpaid))).status).to.not.equal(200);
    const forged = randomUUID();
    expect((await notice(token, claim(forged))).status).to.not.equal(200);
    expect((await notice(token, [{ codigoSolicitacao: unpaid, situacao: 'RECEBIDO' }])).status).to.equal(400);
    expect(await paymentsWith(unpaid)).to.deep.equal([]);
    expect(await paymentsWith(forged)).to.deep.equal([]);
    // News that is not money (a boleto registered) is answered 200 and records nothing.
    const news = await notice(token, [{ codigoSolicitacao: unpaid, situacao: 'A_RECEBER' }]);
    expect(news.status).to.equal(200);

    const codigo = await payAtBank({ seuNumero, notices: 2 });
    await untilStatus(c, res.body.id, 'COMPLETED');
    await eventually(
      () => noticesPending(codigo),
      (n) => n === 0,
      15000,
      50,
    );
    expect(await paymentsWith(codigo)).to.deep.equal([
      { status: 'MATCHED', customer_id: c.customerId, operation_id: res.body.id, amount: '30.00' },
    ]);
    expect((await untilStatus(c, res.body.id, 'COMPLETED')).transactions).to.have.length(1);
  });

  it('a cent short fails AMOUNT_MISMATCH; a cent over completes with a 0.01 remainder UNMATCHED', async () => {
    const short = (await postDeposit('40.00')).res.body;
    const over = (await postDeposit('50.00')).res.body;
    const shortCodigo = await payAtBank({ seuNumero: short.intent.fundingInstruction.seuNumero, valor: '39.99' });
    const overCodigo = await payAtBank({ seuNumero: over.intent.fundingInstruction.seuNumero, valor: '50.01' });
    const failed = await untilStatus(c, short.id, 'FAILED');
    expect(failed.currentState.reason.code).to.equal('AMOUNT_MISMATCH');
    expect((await paymentsWith(shortCodigo))[0]).to.include({ amount: '39.99', operation_id: short.id });
    const done = await untilStatus(c, over.id, 'COMPLETED');
    expect(done.transactions.map((t: { amount: { value: string } }) => t.amount.value)).to.deep.equal(['50.00']);
    const remainder = await sql<{ status: string; amount: string }>(
      `select status, amount::numeric(20, 2)::text as amount from inbound_payments
       where rail = 'BOLETO' and end_to_end_id = ? and remainder_of is not null`,
      [overCodigo],
    );
    expect(remainder).to.deep.equal([{ status: 'UNMATCHED', amount: '0.01' }]);
  });

  it('reconciliation finds a payment no notice brought; the same page listed again changes nothing', async () => {
    const { services, config } = await stack();
    const { res } = await postDeposit('60.00');
    const codigo = await payAtBank({ seuNumero: res.body.intent.fundingInstruction.seuNumero, notices: 0 });
    const run = () =>
      services.temporal.workflow.execute('railReconciliationWorkflow', {
        args: [config.railsTaskQueue, 'BOLETO'],
        taskQueue: config.taskQueue,
        workflowId: `boleto-reconcile-${randomUUID()}`,
      }) as Promise<{ late: number; listed: number }>;
    const first = await run();
    expect(first.late).to.be.greaterThanOrEqual(1);
    await untilStatus(c, res.body.id, 'COMPLETED');
    const second = await run();
    expect(second.late).to.equal(0);
    expect(second.listed).to.be.greaterThanOrEqual(1);
    expect(await paymentsWith(codigo)).to.have.length(1);
  });

  it('a boleto listed paid with an amount that cannot be read is not recorded, and is listed again', async () => {
    const { services, config } = await stack();
    const codigo = randomUUID();
    // The bank's list, as its API answers it, with one paid boleto whose amount is not one (Inter writes 1234.56).
    const cobranca = { codigoSolicitacao: codigo, seuNumero: 'UNREADABLE01', situacao: 'RECEBIDO' };
    const listing = (valorTotalRecebido?: string) =>
      new BoletoRail(
        {
          request: async () => ({
            status: 200,
            body: { cobrancas: [{ cobranca: { ...cobranca, valorTotalRecebido } }], totalPaginas: 1 },
          }),
          close: async () => {},
        } as never,
        { webhookToken: 'unused', payerAddress: { endereco: '', cidade: '', uf: '', cep: '' } } as never,
      );
    const settle = { orm: services.orm, temporal: services.temporal, config };
    for (const valor of ['1.234,56', undefined]) {
      const rail = listing(valor);
      const run = await reconcileRail(settle, { rail: 'BOLETO', listReceived: (w) => rail.listReceived(w) });
      expect(run.failed, String(valor)).to.deep.equal([codigo]);
      expect(await paymentsWith(codigo), 'never recorded as 0.00').to.deep.equal([]);
    }
    // Fractions of a cent, or more digits than the bank's amounts have: no real, never money in the ledger as they
    // stand (a notice with them is 400); the same rule as a TED's (decision 0188).
    for (const valor of ['100.995', '0.001', '12345678901234.00']) {
      const rail = listing(valor);
      const run = await reconcileRail(settle, { rail: 'BOLETO', listReceived: (w) => rail.listReceived(w) });
      expect(run.failed, valor).to.deep.equal([codigo]);
      expect(await paymentsWith(codigo), `never recorded as ${valor}`).to.deep.equal([]);
    }
  });

  it('no rail records a payment in fractions of its asset’s unit: the books check still runs', async () => {
    // The last guard before a provider's payment becomes one of ours (payments/provider-amount.ts): a PSP's list
    // with a Pix of 10.005 BRL (a connector that let it through) is refused for it alone, never in the ledger.
    const { services, config } = await stack();
    const endToEndId = `E${randomUUID().replace(/-/g, '')}`;
    const pix = { endToEndId, amount: '10.005', asset: 'BRL', receivedAt: new Date().toISOString(), returns: [] };
    const settle = { orm: services.orm, temporal: services.temporal, config };
    const run = await reconcileRail(settle, { rail: 'PIX_KEY', listReceived: async () => [pix] });
    expect(run.failed).to.deep.equal([endToEndId]);
    expect(await sql('select 1 from inbound_payments where end_to_end_id = ?', [endToEndId])).to.deep.equal([]);
    // Recorded, 10.005 BRL made the books check throw for the whole asset.
    expect(await checkBooks(systemEm(services.orm), 'BRL')).to.have.property('ok');
  });

  it('an unpaid window cancels the boleto at the bank; a payment that lands anyway is UNMATCHED', async () => {
    const dep = await openDeposit(c, accountId, '70.00', { deposit: 1, replay: 1 }, { rail: 'BOLETO', asset: 'BRL' });
    const op = await untilStatus(c, dep.id, 'FAILED');
    expect(op.currentState.reason.code).to.equal('DEPOSIT_EXPIRED');
    const seuNumero = op.intent.fundingInstruction.seuNumero;
    await eventually(
      () => atBank(seuNumero),
      (b) => b.cobranca.situacao === 'CANCELADO',
      20000,
      100,
    );
    // A payment in flight when it was cancelled: the bank takes it anyway.
    const codigo = await payAtBank({ seuNumero, force: true });
    const [late] = await eventually(
      () => paymentsWith(codigo),
      (ps) => ps[0]?.status === 'UNMATCHED',
      15000,
      50,
    );
    expect(late).to.include({ customer_id: c.customerId, amount: '70.00' });
    expect((await untilStatus(c, dep.id, 'FAILED')).transactions).to.deep.equal([]);
  });

  it('/openapi.json shows the instruction’s fields, and the books close', async () => {
    const { http, services } = await stack();
    const spec = JSON.stringify((await http.get('/openapi.json')).body);
    for (const field of ['digitableLine', 'pixCopiaECola', 'seuNumero']) expect(spec).to.include(field);
    const books = await checkBooks(systemEm(services.orm), 'BRL');
    expect(books.assets[0].differences, 'cambio books check').to.deep.equal([]);
  });
});
