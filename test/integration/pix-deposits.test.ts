// PIX deposits through the PSP, real processes only: the deposit POST creates the charge at the run's simulated PSP
// (a child process) before it answers, the PSP's notice comes back over HTTP to the app's notice endpoint, and the
// deposit completes from it. A PSP that is down is a 503 with nothing created; an API killed between the charge and
// its COMMIT leaves a charge the retry with the same key takes over, and no charge ever pays two deposits.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Decimal from 'decimal.js';
import { Client as PgClient } from 'pg';
import { systemEm } from '../../db/orm';
import { decodeBrCode } from '../../rails/pix/br-code';
import { txidFor } from '../../rails/pix/ids';
import { recordReceived } from '../../payments/rail-payments';
import { findPaymentByReference } from '../../db/repositories/inbound-payments';
import { cambio } from '../helpers/cli';
import { operationWorkflowId } from '../../workflows/ids';
import { temporal as proto } from '@temporalio/proto';
import { activeAccount } from '../helpers/fixtures';
import { openDeposit } from '../helpers/inbound-payments';
import { balance, getOp, quote, untilStatus } from '../helpers/money';
import { exitWithin, kill, killAll, spawnApi, spawnWorker } from '../helpers/processes';
import { eventually, newCustomer, stack, untilStarted, type TestCustomer } from '../helpers/stack';

const { EventType } = proto.api.enums.v1;

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  const { services } = await stack();
  return (await systemEm(services.orm).execute(query, params)) as T[];
}

const paymentsWith = (endToEndId: string) =>
  sql<{ status: string; customer_id: string | null; operation_id: string | null; amount: string }>(
    `select status, customer_id, operation_id, amount::numeric(20, 2)::text as amount
     from inbound_payments where end_to_end_id = ?`,
    [endToEndId],
  );

const depositsOf = (accountId: string) =>
  sql<{ id: string }>(`select id from operations where account_id = ? and type = 'DEPOSIT'`, [accountId]);

async function pspState() {
  const { psp } = await stack();
  return (await psp.control('GET', '/state')).body;
}

/** What a payer's bank does: pays the charge (the simulator then sends its notice). */
async function payCharge(body: Record<string, unknown>): Promise<string> {
  const { psp } = await stack();
  const res = await psp.control('POST', '/pix', body);
  expect(res.status, JSON.stringify(res.body)).to.be.oneOf([201, 202]);
  return res.body.endToEndId;
}

describe('PIX deposits through the PSP: charge, notice, settlement', function () {
  this.timeout(120000);
  let c: TestCustomer;
  let accountId: string;

  const postDeposit = async (value: string, key = randomUUID(), via?: { url: string }) => {
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
    const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } };
    return { q, key, body, res: await sendDeposit(body, key, via) };
  };
  const sendDeposit = async (body: unknown, key: string, via?: { url: string }) => {
    if (via) {
      return fetch(`${via.url}/api/operations/deposit`, {
        method: 'POST',
        headers: { ...c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': key },
        body: JSON.stringify(body),
      });
    }
    const { http } = await stack();
    return http
      .post('/api/operations/deposit')
      .set(c.auth)
      .set('X-Idempotency-Key', key)
      .send(body as object);
  };

  before(async () => {
    c = await newCustomer('Pix Deposits Ltda');
    accountId = (await activeAccount(c, ['BRL'])).id;
  });

  after(async () => {
    const { psp } = await stack();
    await psp.control('DELETE', '/faults');
    await killAll();
  });

  it('answers with the charge, and the PSP notice completes the deposit: HTTP only', async () => {
    const before = await balance(c, accountId, 'BRL');
    const { res, key, q } = await postDeposit('123.45');
    const r = res as { status: number; body: any };
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const instruction = r.body.intent.fundingInstruction;
    const txid = txidFor(c.customerId, key, q.id);
    expect(instruction).to.include({ rail: 'PIX_KEY', keyType: 'EMAIL', key: 'pix@cambio.example.com', txid });
    expect(Object.keys(instruction).sort()).to.deep.equal(
      ['expiresAt', 'key', 'keyType', 'location', 'pixCopiaECola', 'rail', 'txid'].sort(),
    );
    const code = decodeBrCode(instruction.pixCopiaECola);
    expect(code['54']).to.equal('123.45');
    expect((code['26'] as Record<string, string>)['25']).to.equal(instruction.location);
    const charge = (await pspState()).charges[txid];
    expect(charge).to.deep.include({ valor: '123.45', location: instruction.location, status: 'ATIVA' });
    expect(charge.devedor).to.have.property('nome');

    const e2e = await payCharge({ txid });
    const done = await untilStatus(c, r.body.id, 'COMPLETED');
    expect(done.transactions.map((t: { amount: { value: string } }) => t.amount.value)).to.deep.equal(['123.45']);
    expect(await paymentsWith(e2e)).to.deep.equal([
      { status: 'MATCHED', customer_id: c.customerId, operation_id: r.body.id, amount: '123.45' },
    ]);
    expect((await balance(c, accountId, 'BRL')).available).to.equal(
      new Decimal(before.available).plus('123.45').toFixed(2),
    );
  });

  it('the same notice twice records one payment and credits once', async () => {
    const { res, key, q } = await postDeposit('7.00');
    const dep = (res as { body: any }).body;
    const e2e = await payCharge({ txid: txidFor(c.customerId, key, q.id), notices: 2 });
    await eventually(
      async () => (await pspState()).delivered.filter((d: any) => d.body.pix[0].endToEndId === e2e),
      (delivered) => delivered.length === 2 && delivered.every((d: { status: number }) => d.status === 200),
      15000,
      50,
    );
    const done = await untilStatus(c, dep.id, 'COMPLETED');
    expect(done.transactions).to.have.length(1);
    expect(await paymentsWith(e2e)).to.have.length(1);
  });

  it('a Pix paid before its charge expired, noticed after the window, still completes its deposit', async () => {
    const { services, psp, noticeBaseUrl, config } = await stack();
    const windowSeconds = 12;
    const dep = await openDeposit(c, accountId, '21.00', { deposit: windowSeconds, replay: 60 });
    const instruction = (await getOp(c, dep.id)).intent.fundingInstruction;
    const started = await untilStarted(services.temporal.workflow.getHandle(operationWorkflowId(dep.id)));
    // The payer's bank pays just before the charge's expiresAt (the PSP takes no payment after it); the PSP's first
    // notice is lost (the API restarting, say) and its retry arrives once the deposit's own window has run out.
    await sleep(Math.max(0, Date.parse(instruction.expiresAt) - Date.now() - 300));
    const paid = await psp.control('POST', '/pix', { txid: instruction.txid, notices: 0 });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(201);
    await sleep(Math.max(0, started.startTime.getTime() + windowSeconds * 1000 + 800 - Date.now()));
    const notice = await fetch(`${noticeBaseUrl}/rails/pix/${config.pix.webhookToken}/pix`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ pix: [paid.body] }),
    });
    expect(notice.status).to.equal(200);
    const settled = await eventually(
      () => getOp(c, dep.id),
      (op) => op.currentState?.status !== 'REQUESTED',
      20000,
    );
    expect(settled.currentState.status, JSON.stringify(settled.currentState)).to.equal('COMPLETED');
    expect(await paymentsWith(paid.body.endToEndId)).to.deep.equal([
      { status: 'MATCHED', customer_id: c.customerId, operation_id: dep.id, amount: '21.00' },
    ]);
  });

  it('a Pix its PSP sent back by a return of its own credits no deposit; one sent back later is said', async () => {
    const { services, psp } = await stack();
    const before = await balance(c, accountId, 'BRL');
    const { res, key, q } = await postDeposit('31.00');
    const dep = (res as { body: any }).body;
    // The payer pays; no notice reaches Cambio (the API down, say) and, before reconciliation or a retried notice
    // brings the Pix, the PSP returns it itself (a MED return after a fraud claim): the money left again.
    const e2e = await payCharge({ txid: txidFor(c.customerId, key, q.id), notices: 0 });
    const med = await psp.control('POST', `/pix/${e2e}/med-return`, {});
    expect(med.status, JSON.stringify(med.body)).to.equal(201);
    // The return's settlement sends the Pix's notice, with the return in it; Cambio reads the Pix back and records it.
    const [payment] = await eventually(
      () => paymentsWith(e2e),
      (rows) => rows.length === 1 && rows[0].status !== 'RECEIVED',
      15000,
    );
    expect(payment).to.deep.equal({
      status: 'UNMATCHED',
      customer_id: c.customerId,
      operation_id: null,
      amount: '31.00',
    });
    expect((await getOp(c, dep.id)).currentState.status).to.equal('REQUESTED');
    expect((await balance(c, accountId, 'BRL')).available).to.equal(before.available);

    // A return the PSP lists as made that Cambio never asked for is said whenever the Pix is listed again (by
    // reconciliation): the record stands, an operator settles it.
    const listed = {
      endToEndId: e2e,
      chargeId: txidFor(c.customerId, key, q.id),
      amount: '31.00',
      asset: 'BRL',
      receivedAt: new Date().toISOString(),
      returns: [{ returnId: med.body.id, amount: '31.00', status: 'RETURNED' as const, endToEndId: med.body.rtrId }],
    };
    const again = await recordReceived(services, 'PIX_KEY', listed);
    expect(again.created).to.equal(false);
    expect(again.disagrees).to.include(`return Cambio did not ask for (${med.body.id}, ${med.body.rtrId})`);
    const ours = await recordReceived(services, 'PIX_KEY', { ...listed, returns: [] });
    expect(ours.disagrees).to.equal(undefined);
    // The operator records the PSP's return as the payment's: no longer said.
    const recorded = (await findPaymentByReference(systemEm(services.orm), 'PIX_KEY', e2e))!;
    await cambio(
      ...['payment', 'return', recorded.id, '--reason', 'MED return by the PSP'],
      ...['--outside', '--reference', med.body.rtrId],
    );
    expect((await paymentsWith(e2e))[0].status).to.equal('RETURNED');
    expect((await recordReceived(services, 'PIX_KEY', listed)).disagrees).to.equal(undefined);
  });

  it("a notice is answered once recorded, not once decided: a deposit held up, the PSP's 200 on time", async () => {
    const { res, key, q } = await postDeposit('14.00');
    const dep = (res as { body: any }).body;
    // The deposit's row held as its decision would hold it: its workflow cannot decide or reconcile meanwhile. (NO KEY
    // UPDATE: the record's reference to the deposit still goes in; the workflow's step waits.)
    const pg = new PgClient({ connectionString: process.env.DATABASE_URL });
    await pg.connect();
    try {
      await pg.query('begin');
      await pg.query('select 1 from operations where id = $1 for no key update', [dep.id]);
      const e2e = await payCharge({ txid: txidFor(c.customerId, key, q.id) });
      // Answered within 2 s: before decision 0156 the notice waited for the decision, here 3 s (its deadline).
      const [delivery] = await eventually(
        async () => (await pspState()).delivered.filter((d: any) => d.body.pix[0].endToEndId === e2e),
        (delivered) => delivered.length === 1,
        2000,
        25,
      );
      expect(delivery.status).to.equal(200);
      expect(await paymentsWith(e2e)).to.deep.equal([
        { status: 'RECEIVED', customer_id: c.customerId, operation_id: dep.id, amount: '14.00' },
      ]);
      await pg.query('commit');
      // Released: the signal the notice sent is taken, and the deposit completes from it.
      const done = await untilStatus(c, dep.id, 'COMPLETED');
      expect(done.transactions.map((t: { amount: { value: string } }) => t.amount.value)).to.deep.equal(['14.00']);
      expect((await paymentsWith(e2e))[0].status).to.equal('MATCHED');
    } finally {
      await pg.end();
    }
  });

  it('a wrong token is 401 and records nothing; a txid never issued goes to the platform suspense', async () => {
    const { noticeBaseUrl } = await stack();
    const { res, key, q } = await postDeposit('9.00');
    const dep = (res as { body: any }).body;
    const item = (e2e: string, txid?: string) => ({
      endToEndId: e2e,
      ...(txid ? { txid } : {}),
      valor: '9.00',
      horario: new Date().toISOString(),
    });
    const notice = (token: string, body: unknown) =>
      fetch(`${noticeBaseUrl}/rails/pix/${token}/pix`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const forged = `E99999008202601011200${randomUUID().replace(/-/g, '').slice(0, 11)}`;
    const refused = await notice('not-the-token', { pix: [item(forged, txidFor(c.customerId, key, q.id))] });
    expect(refused.status).to.equal(401);
    expect(((await refused.json()) as { code: string }).code).to.equal('UNAUTHORIZED');
    expect(await paymentsWith(forged)).to.deep.equal([]);
    expect((await untilStatus(c, dep.id, 'REQUESTED')).transactions).to.deep.equal([]);

    const { config } = await stack();
    const malformed = await notice(config.pix.webhookToken, { pix: [{ endToEndId: forged }] });
    expect(malformed.status).to.equal(400);
    expect(await paymentsWith(forged)).to.deep.equal([]);

    // A Pix to the receiving key with a txid Cambio never issued: the PSP holds it and notices it (a notice posted
    // by hand would be refused, since the PSP has no such Pix: pix-notice-claims.test.ts).
    const stray = await payCharge({
      txid: 'cbneverissued0000000000000000000',
      valor: '9.00',
      chave: config.pix.receivingKey,
    });
    const strayRecord = await eventually(
      () => paymentsWith(stray),
      (rows) => rows.length === 1 && rows[0].status !== 'RECEIVED',
      15000,
      50,
    );
    expect(strayRecord).to.deep.equal([{ status: 'UNMATCHED', customer_id: null, operation_id: null, amount: '9.00' }]);
  });

  it('a PSP that refuses the charge is 422 RAIL_REJECTED, one asking to wait (429) is 503: no operation', async () => {
    const { psp } = await stack();
    const depositsBefore = (await depositsOf(accountId)).length;
    await psp.control('POST', '/faults', { status: 400, pathPrefix: '/cob/', count: 1 });
    const refused = (await postDeposit('9.00')).res as { status: number; body: any };
    expect(refused.status, JSON.stringify(refused.body)).to.equal(422);
    expect(refused.body.code).to.equal('RAIL_REJECTED');
    // An API Pix 400 is an RFC 7807 problem: the customer is told which of its data the PSP refused (the account
    // owner's tax id, as the charge's debtor), never the PSP's words, its paths or the value it echoes.
    const problem = {
      type: 'https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida',
      title: 'Cobrança inválida.',
      status: 400,
      detail: 'A requisição que busca alterar ou criar uma cobrança não respeita o schema.',
      violacoes: [
        { razao: 'CPF com dígito verificador inválido', propriedade: 'cob.devedor.cpf', valor: '12345678900' },
      ],
    };
    await psp.control('POST', '/faults', { method: 'PUT', status: 400, body: problem, pathPrefix: '/cob/', count: 1 });
    const told = (await postDeposit('9.00')).res as { status: number; body: any };
    expect([told.status, told.body.code], JSON.stringify(told.body)).to.deep.equal([422, 'RAIL_REJECTED']);
    expect(told.body.message).to.match(/account owner/);
    for (const internal of ['Cobrança inválida', 'não respeita', 'dígito', '12345678900', '/cob/', 'HTTP 400']) {
      expect(JSON.stringify(told.body), internal).to.not.contain(internal);
    }
    const unexplained = { ...problem, violacoes: [{ razao: 'expirada', propriedade: 'cob.calendario.expiracao' }] };
    await psp.control('POST', '/faults', {
      method: 'PUT',
      status: 400,
      body: unexplained,
      pathPrefix: '/cob/',
      count: 1,
    });
    const plain = (await postDeposit('9.00')).res as { status: number; body: any };
    expect([plain.status, plain.body.message]).to.deep.equal([422, "the PSP refused the deposit's charge"]);
    // A 404 to the charge's PUT names no data of the customer's (a key the PSP does not know is 400): the PSP has
    // no such route, PIX_PSP_URL missing its API's base (`.../api`). The operator's to fix: 503, not a refusal.
    await psp.control('POST', '/faults', { method: 'PUT', status: 404, pathPrefix: '/cob/', count: 1 });
    const lost = (await postDeposit('9.00')).res as { status: number; body: any; headers: Record<string, string> };
    expect([lost.status, lost.body.code], JSON.stringify(lost.body)).to.deep.equal([503, 'SERVICE_UNAVAILABLE']);
    expect(lost.headers['retry-after']).to.match(/^\d+$/);
    await psp.control('POST', '/faults', { status: 429, pathPrefix: '/cob/', count: 1 });
    const later = (await postDeposit('9.00')).res as { status: number; headers: Record<string, string> };
    expect(later.status).to.equal(503);
    expect(later.headers['retry-after']).to.match(/^\d+$/);
    expect(await depositsOf(accountId)).to.have.length(depositsBefore);
  });

  it('a PSP down or hanging: 503 with Retry-After, no operation; the retry with the key gets its txid', async () => {
    const { psp, config } = await stack();
    const depositsBefore = (await depositsOf(accountId)).length;
    await psp.control('POST', '/faults', { status: 503, pathPrefix: '/cob/', count: 1 });
    const { res, key, body, q } = await postDeposit('11.00');
    const down = res as { status: number; headers: Record<string, string>; body: any };
    expect(down.status, JSON.stringify(down.body)).to.equal(503);
    expect(down.body.code).to.equal('SERVICE_UNAVAILABLE');
    expect(Number(down.headers['retry-after'])).to.be.greaterThan(0);
    expect(await depositsOf(accountId)).to.have.length(depositsBefore);

    await psp.control('POST', '/faults', { hangMs: config.pix.chargeTimeoutMs + 2000, pathPrefix: '/cob/', count: 1 });
    const hung = (await sendDeposit(body, key)) as { status: number; headers: Record<string, string> };
    expect(hung.status).to.equal(503);
    expect(hung.headers['retry-after']).to.match(/^\d+$/);
    expect(await depositsOf(accountId)).to.have.length(depositsBefore);
    const [quoteRow] = await sql<{ consumed_by: string | null }>('select consumed_by from quotes where id = ?', [q.id]);
    expect(quoteRow.consumed_by, 'the quote is still free').to.equal(null);

    const retried = (await sendDeposit(body, key)) as { status: number; body: any };
    expect(retried.status, JSON.stringify(retried.body)).to.equal(201);
    expect(retried.body.intent.fundingInstruction.txid).to.equal(txidFor(c.customerId, key, q.id));
    const replay = (await sendDeposit(body, key)) as { status: number; body: any; headers: Record<string, string> };
    expect([replay.status, replay.headers['idempotent-replayed']]).to.deep.equal([201, 'true']);
    expect(replay.body.intent.fundingInstruction).to.deep.equal(retried.body.intent.fundingInstruction);
    expect(await depositsOf(accountId)).to.have.length(depositsBefore + 1);
  });

  it('a PSP answer that is not this charge is read back: never another txid, never a 500', async () => {
    const { psp, config } = await stack();
    const depositsBefore = (await depositsOf(accountId)).length;
    const otherTxid = `cb${randomUUID().replace(/-/g, '')}`;
    const cobOf = (txid: string, valor: string) => ({
      calendario: { criacao: new Date().toISOString(), expiracao: 86400 },
      txid,
      location: 'pix.example.com/qr/v2/other',
      status: 'ATIVA',
      valor: { original: valor },
      chave: config.pix.receivingKey,
    });
    // 201 naming another charge, and nothing created under ours: 503, no operation; the retry is its own txid.
    await psp.control('POST', '/faults', {
      status: 201,
      body: cobOf(otherTxid, '19.00'),
      pathPrefix: '/cob/',
      count: 1,
    });
    const { res, key, body, q } = await postDeposit('19.00');
    const other = res as { status: number; headers: Record<string, string>; body: any };
    expect(other.status, JSON.stringify(other.body)).to.equal(503);
    expect(other.headers['retry-after']).to.match(/^\d+$/);
    expect(await depositsOf(accountId)).to.have.length(depositsBefore);
    const retried = (await sendDeposit(body, key)) as { status: number; body: any };
    expect(retried.status, JSON.stringify(retried.body)).to.equal(201);
    expect(retried.body.intent.fundingInstruction.txid).to.equal(txidFor(c.customerId, key, q.id));

    // The charge created, its answer without `calendario`: read back, the deposit is created with it.
    const { calendario: _calendario, ...noCalendar } = cobOf(otherTxid, '23.00');
    await psp.control('POST', '/faults', {
      status: 201,
      body: noCalendar,
      afterHandling: true,
      pathPrefix: '/cob/',
      count: 1,
    });
    const second = await postDeposit('23.00');
    const read = second.res as { status: number; body: any };
    expect(read.status, JSON.stringify(read.body)).to.equal(201);
    expect(read.body.intent.fundingInstruction.txid).to.equal(txidFor(c.customerId, second.key, second.q.id));
    expect(await depositsOf(accountId)).to.have.length(depositsBefore + 2);
  });

  it('a retry whose charge the PSP shows removed or paid is 422, no deposit; a new key, a new charge', async () => {
    const { psp } = await stack();
    let deposits = (await depositsOf(accountId)).length;
    const ends: [string, (txid: string) => Promise<unknown>][] = [
      ['removed by the PSP', (txid) => psp.control('POST', `/cob/${txid}/remove`, { by: 'PSP' })],
      ['removed by us', (txid) => psp.control('POST', `/cob/${txid}/remove`, { by: 'USUARIO_RECEBEDOR' })],
      ['paid before any deposit', (txid) => payCharge({ txid })],
    ];
    for (const [what, end] of ends) {
      // The PSP creates the charge but its answer is lost: 503, and the charge under the key's txid ends meanwhile.
      await psp.control('POST', '/faults', {
        method: 'PUT',
        status: 503,
        afterHandling: true,
        pathPrefix: '/cob/',
        count: 1,
      });
      const { res, key, body, q } = await postDeposit('27.00');
      expect((res as { status: number }).status, what).to.equal(503);
      const txid = txidFor(c.customerId, key, q.id);
      await end(txid);
      const retried = (await sendDeposit(body, key)) as { status: number; body: any };
      expect([retried.status, retried.body.code], `${what}: ${JSON.stringify(retried.body)}`).to.deep.equal([
        422,
        'RAIL_REJECTED',
      ]);
      expect(retried.body.message, what).to.match(/new X-Idempotency-Key/);
      for (const internal of ['REMOVIDA', 'CONCLUIDA', txid, '/cob/']) {
        expect(JSON.stringify(retried.body), `${what}: ${internal}`).to.not.contain(internal);
      }
      expect(await depositsOf(accountId), what).to.have.length(deposits);
      // Asked again with a new key, the quote (never consumed) gets a charge of its own that can be paid.
      const fresh = (await sendDeposit(body, randomUUID())) as { status: number; body: any };
      expect(fresh.status, `${what}: ${JSON.stringify(fresh.body)}`).to.equal(201);
      expect(fresh.body.intent.fundingInstruction.txid).to.not.equal(txid);
      expect(await depositsOf(accountId), what).to.have.length(++deposits);
    }
  });

  it('the sandbox route pays the charge at the simulated PSP and answers with the record its notice made', async () => {
    const { http } = await stack();
    const { res, key, q } = await postDeposit('15.00');
    const dep = (res as { body: any }).body;
    const paid = await http
      .post(`/api/sandbox/operations/${dep.id}/inbound-payment`)
      .set(c.auth)
      .set('X-Idempotency-Key', randomUUID())
      .send({ amount: { value: '15.00', asset: 'BRL' } });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    expect(paid.body).to.deep.include({ status: 'MATCHED', operationId: dep.id });
    const atPsp = (await pspState()).received.filter(
      (p: { endToEndId: string }) => p.endToEndId === paid.body.endToEndId,
    );
    expect(atPsp).to.have.length(1);
    expect(atPsp[0]).to.include({ txid: txidFor(c.customerId, key, q.id), valor: '15.00' });
    await untilStatus(c, dep.id, 'COMPLETED');
  });

  it("the sandbox route after the notice's signal went, its deposit held up: one signal, no failed task", async () => {
    const { http, services } = await stack();
    const { res } = await postDeposit('17.00');
    const dep = (res as { body: any }).body;
    // The deposit's row held as in the notice test above: the notice records the payment and sends its signal, and
    // the route then finds the record still RECEIVED while the workflow waits for the row. Before decision 0158 the
    // route sent the signal again, and the task that was deciding failed under it (two runs in three).
    const pg = new PgClient({ connectionString: process.env.DATABASE_URL });
    await pg.connect();
    let paid: Promise<{ status: number; body: any }> | undefined;
    try {
      await pg.query('begin');
      await pg.query('select 1 from operations where id = $1 for no key update', [dep.id]);
      paid = http
        .post(`/api/sandbox/operations/${dep.id}/inbound-payment`)
        .set(c.auth)
        .set('X-Idempotency-Key', randomUUID())
        .send({ amount: { value: '17.00', asset: 'BRL' } })
        .then((r) => r); // sent now (a request goes out once it is awaited), answered after the row is released
      await eventually(
        async () => sql(`select status from inbound_payments where operation_id = ?`, [dep.id]),
        (rows) => rows.length === 1,
        5000,
        25,
      );
      // Long enough for the route to look at the record (every 25 ms) after the notice's signal went.
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      await pg.query('commit').catch(() => undefined);
      await pg.end();
    }
    const answer = await paid!;
    expect([answer.status, answer.body.status], JSON.stringify(answer.body)).to.deep.equal([200, 'MATCHED']);
    await untilStatus(c, dep.id, 'COMPLETED');
    const handle = services.temporal.workflow.getHandle(operationWorkflowId(dep.id));
    await handle.result();
    const types = (await handle.fetchHistory()).events!.map((e) => e.eventType);
    const count = (type: proto.api.enums.v1.EventType) => types.filter((t) => t === type).length;
    expect({
      signals: count(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
      failedTasks: count(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED),
    }).to.deep.equal({ signals: 1, failedTasks: 0 });
  });

  it('a key used again with another body is 422 before the PSP is asked: no second charge', async () => {
    const { res, key, body } = await postDeposit('18.00');
    const first = res as { status: number; body: any };
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    const charges = Object.keys((await pspState()).charges).length;
    const other = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '19.00' });

    const reused = (await sendDeposit({ ...body, quoteId: other.id }, key)) as { status: number; body: any };
    expect([reused.status, reused.body.code], JSON.stringify(reused.body)).to.deep.equal([
      422,
      'IDEMPOTENCY_KEY_REUSED',
    ]);
    // Decision 0078's "a request refused anyway leaves no charge": this one was refused for its key.
    expect((await pspState()).charges[txidFor(c.customerId, key, other.id)]).to.equal(undefined);
    const replay = (await sendDeposit(body, key)) as { status: number; body: any; headers: Record<string, string> };
    expect([replay.status, replay.headers['idempotent-replayed']]).to.deep.equal([201, 'true']);
    expect(replay.body).to.deep.equal(first.body);
    expect(Object.keys((await pspState()).charges)).to.have.length(charges);
  });

  it('the sandbox route with a key used again after its 24 h pays the deposit it names, not the first', async () => {
    const { http } = await stack();
    const first = ((await postDeposit('21.00')).res as { body: any }).body;
    const second = ((await postDeposit('21.00')).res as { body: any }).body;
    const key = randomUUID();
    const pay = (operationId: string) =>
      http
        .post(`/api/sandbox/operations/${operationId}/inbound-payment`)
        .set(c.auth)
        .set('X-Idempotency-Key', key)
        .send({ amount: { value: '21.00', asset: 'BRL' } });
    const paidFirst = await pay(first.id);
    expect([paidFirst.status, paidFirst.body.operationId], JSON.stringify(paidFirst.body)).to.deep.equal([
      200,
      first.id,
    ]);
    await untilStatus(c, first.id, 'COMPLETED');

    // The key's 24 h are over: the next use of it is a new request.
    await sql(
      `update idempotency_keys set expires_at = now() - interval '1 second' where customer_id = ? and key = ?`,
      [c.customerId, key],
    );
    const paidSecond = await pay(second.id);
    expect(paidSecond.status, JSON.stringify(paidSecond.body)).to.equal(200);
    expect(paidSecond.headers['idempotent-replayed']).to.equal(undefined);
    expect(paidSecond.body).to.deep.include({ status: 'MATCHED', operationId: second.id });
    expect(paidSecond.body.id).to.not.equal(paidFirst.body.id);
    expect(paidSecond.body.endToEndId).to.not.equal(paidFirst.body.endToEndId);
    await untilStatus(c, second.id, 'COMPLETED');
    // Within its new 24 h the key replays what it answered last.
    const again = await pay(second.id);
    expect([again.status, again.headers['idempotent-replayed']]).to.deep.equal([200, 'true']);
    expect(again.body).to.deep.equal(paidSecond.body);
  });

  it('the sandbox route refuses an amount no Pix carries with 400, stored with its key: nothing is paid', async () => {
    const { http } = await stack();
    const { res, key, q } = await postDeposit('16.00');
    const dep = (res as { body: any }).body;
    const txid = txidFor(c.customerId, key, q.id);
    const pay = (value: string, payKey: string) =>
      http
        .post(`/api/sandbox/operations/${dep.id}/inbound-payment`)
        .set(c.auth)
        .set('X-Idempotency-Key', payKey)
        .send({ amount: { value, asset: 'BRL' } });
    const tooMuch = randomUUID();
    for (const value of ['10000000000.00', '999999999999999.99']) {
      const refused = await pay(value, value === '10000000000.00' ? tooMuch : randomUUID());
      expect([refused.status, refused.body.code], JSON.stringify(refused.body)).to.deep.equal([400, 'INVALID_AMOUNT']);
      expect(refused.body.message).to.contain('9999999999.99');
    }
    const replay = await pay('10000000000.00', tooMuch);
    expect([replay.status, replay.headers['idempotent-replayed']]).to.deep.equal([400, 'true']);
    const received = (await pspState()).received.filter((p: { txid?: string }) => p.txid === txid);
    expect(received, 'the PSP was asked to pay nothing').to.deep.equal([]);
    const paid = await pay('16.00', randomUUID());
    expect([paid.status, paid.body.status], JSON.stringify(paid.body)).to.deep.equal([200, 'MATCHED']);
    await untilStatus(c, dep.id, 'COMPLETED');
  });

  it('a worker started while the PSP refuses the registration serves, and registers once it is back', async () => {
    const { psp, config, noticeBaseUrl } = await stack();
    const key = config.pix.receivingKey;
    const before = (await pspState()).webhooks[key];
    await psp.control('POST', '/faults', { method: 'PUT', pathPrefix: '/webhook/', status: 503, count: 2 });
    // A worker of the rails' queue only: the one that registers (no workflow pollers to wait for).
    const worker = await spawnWorker('worker-psp-down-at-start', `cambio-test-pix-registration-${randomUUID()}`, {
      pollers: 0,
      env: { WORKER_QUEUES: 'rails' },
    });
    try {
      const after = await eventually(
        async () => (await pspState()).webhooks[key],
        (hook) => hook.criacao !== before.criacao,
        30000,
        100,
      );
      expect(after.webhookUrl).to.equal(`${noticeBaseUrl}/rails/pix/${config.pix.webhookToken}`);
      expect(worker.alive()).to.equal(true);
      expect(worker.output()).to.include('PSP notice registration failed; retrying in the background');
    } finally {
      await kill(worker);
    }
  });

  it('an API killed between charge and COMMIT: the retry is one deposit, same txid; no charge pays two', async () => {
    const { config, http } = await stack();
    const api = await spawnApi('api-deposit-crash-before-commit', config.taskQueue, {
      CAMBIO_TEST_CRASH_AT: 'before-commit',
    });
    const before = await balance(c, accountId, 'BRL');
    const depositsBefore = (await depositsOf(accountId)).length;
    const key = randomUUID();
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '40.00' });
    const txid = txidFor(c.customerId, key, q.id);
    const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } };
    const died = await sendDeposit(body, key, api).then(
      (r) => `answered ${r.status}`,
      (err: Error) => err,
    );
    expect(died, 'the request got no answer (its process died)').to.be.instanceOf(Error);
    await exitWithin(api);
    expect((await pspState()).charges[txid], 'the charge exists at the PSP').to.include({ valor: '40.00' });
    expect(await depositsOf(accountId), 'nothing committed').to.have.length(depositsBefore);

    // The client retries with the same key and body, on another process.
    const retry = await http.post('/api/operations/deposit').set(c.auth).set('X-Idempotency-Key', key).send(body);
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body.intent.fundingInstruction).to.include({
      txid,
      location: (await pspState()).charges[txid].location,
    });
    expect(Object.values((await pspState()).charges).filter((ch: any) => ch.txid === txid)).to.have.length(1);
    expect(await depositsOf(accountId)).to.have.length(depositsBefore + 1);

    // The charge paid twice (a payer's second Pix to the same QR code): one deposit takes one payment.
    const first = await payCharge({ txid });
    await untilStatus(c, retry.body.id, 'COMPLETED');
    const second = await payCharge({ txid });
    await eventually(
      async () => (await paymentsWith(second))[0]?.status,
      (s) => s === 'UNMATCHED',
      15000,
      50,
    );
    expect((await paymentsWith(first))[0]).to.include({ status: 'MATCHED', operation_id: retry.body.id });
    expect((await paymentsWith(second))[0]).to.include({ customer_id: c.customerId, operation_id: retry.body.id });
    const [{ n }] = await sql<{ n: string }>(
      `select count(*) as n from operations where type = 'DEPOSIT' and intent -> 'fundingInstruction' ->> 'txid' = ?`,
      [txid],
    );
    expect(Number(n)).to.equal(1);
    expect((await balance(c, accountId, 'BRL')).available).to.equal(
      new Decimal(before.available).plus('40.00').toFixed(2),
    );
  });
});
