// The contract every PIX connector passes, run over real HTTP against the simulated PSP (a child process): charges,
// notices, reconciliation's list, returns, payouts, ids that make retries harmless, and the OAuth2 token's life.
// A notice receiver stands in for Cambio's endpoint: it checks each notice with the connector and records one
// payment per end-to-end id.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { NoticeRejectedError, RailRejectedError, RailUnavailableError } from '../../rails/errors';
import type { ReceivedPayment } from '../../rails/rail';
import { decodeBrCode } from '../../rails/pix/br-code';
import { PixClient } from '../../rails/pix/client';
import { PixRail } from '../../rails/pix/connector';
import { newReturnId, payoutIdFor, txidFor } from '../../rails/pix/ids';
import { SIM_CLIENT, startSimulator, type SimulatorProc } from '../helpers/psp-simulator';
import { eventually } from '../helpers/stack';

const KEY = 'pix@cambio.example.com';
const TOKEN = 'contract-webhook-token';

/**
 * Cambio's notice endpoint in miniature: 401 on a wrong token, every item read back from the PSP, one record per
 * endToEndId of what the PSP confirms, 200 after recording.
 */
class NoticeReceiver {
  readonly payments = new Map<string, ReceivedPayment>();
  /** Counted once a notice's answer is written, so what that notice recorded is in `payments` by then. */
  answered = 0;
  refused = 0;
  private server: http.Server;
  url = '';

  constructor(rail: () => PixRail) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void this.answer(rail(), req.url ?? '', Buffer.concat(chunks), res));
    });
  }

  private async answer(rail: PixRail, url: string, raw: Buffer, res: http.ServerResponse) {
    const token = /^\/rails\/pix\/([^/]+)\/pix$/.exec(url)?.[1] ?? '';
    try {
      const { confirmed, refused } = await rail.verifyNotice(decodeURIComponent(token), JSON.parse(raw.toString()));
      for (const p of confirmed) this.payments.set(p.endToEndId, p);
      res.writeHead(refused.length ? 422 : 200).end();
    } catch (err) {
      this.refused++;
      res.writeHead(err instanceof NoticeRejectedError ? err.status : 500).end();
    } finally {
      this.answered++;
    }
  }

  async start() {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop() {
    this.server.closeAllConnections();
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('PIX connector contract (against the simulated PSP)', function () {
  this.timeout(60000);
  let sim: SimulatorProc;
  let client: PixClient;
  let rail: PixRail;
  let receiver: NoticeReceiver;

  const connect = (timeoutMs = 5000) => {
    const c = new PixClient({
      baseUrl: sim.apiUrl,
      clientId: SIM_CLIENT.id,
      clientSecret: SIM_CLIENT.secret,
      timeoutMs,
    });
    const r = new PixRail(c, {
      receivingKey: KEY,
      receivingKeyType: 'EMAIL',
      webhookToken: TOKEN,
      merchantName: 'Cambio Contract',
      merchantCity: 'Sao Paulo',
    });
    return { client: c, rail: r };
  };
  const charge = (amount = '100.00', chargeId = txidFor(randomUUID(), randomUUID(), randomUUID())) =>
    rail.createCharge({
      chargeId,
      amount,
      expiresInSeconds: 3600,
      debtor: { name: 'Acme Ltda', cnpj: '11222333000181' },
    });
  const pay = async (body: Record<string, unknown>) => {
    const res = await sim.control('POST', '/pix', body);
    expect(res.status, JSON.stringify(res.body)).to.be.oneOf([201, 202]);
    return res.body.endToEndId as string;
  };

  before(async () => {
    sim = await startSimulator();
    ({ client, rail } = connect());
    receiver = new NoticeReceiver(() => rail);
    await receiver.start();
    await rail.registerNotices(`${receiver.url}/rails/pix/${TOKEN}`);
  });

  after(async () => {
    await client?.close();
    await receiver?.stop();
    await sim?.stop();
  });

  it('charge: the BR Code decodes back to the location and amount; the same txid is the same charge', async () => {
    const txid = txidFor(randomUUID(), 'key-1', randomUUID());
    expect(txid).to.match(/^[a-zA-Z0-9]{26,35}$/);
    const charged = await charge('250.75', txid);
    expect(charged).to.include({ chargeId: txid });
    const first = charged.fundingInstruction;
    expect(first).to.include({ rail: 'PIX_KEY', txid, keyType: 'EMAIL', key: KEY, expiresAt: charged.expiresAt });
    const fields = decodeBrCode(first.pixCopiaECola);
    expect((fields['26'] as Record<string, string>)['25']).to.equal(first.location);
    expect(fields['54']).to.equal('250.75');
    expect(Date.parse(first.expiresAt) - Date.now()).to.be.within(3500_000, 3600_000);
    const again = await charge('250.75', txid);
    expect(again).to.deep.equal(charged);
    // The same txid for another amount is another charge: refused, not silently merged.
    const err = await charge('999.00', txid).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RailRejectedError);
  });

  it('a charge whose PUT times out after the PSP took it: the same txid again is that charge, once', async () => {
    const slow = connect(400);
    try {
      const txid = txidFor(randomUUID(), randomUUID(), randomUUID());
      await sim.control('POST', '/faults', {
        method: 'PUT',
        pathPrefix: `/cob/${txid}`,
        afterHandling: true,
        hangMs: 1500,
        count: 1,
      });
      const request = { chargeId: txid, amount: '61.00', expiresInSeconds: 600 };
      const err = await slow.rail.createCharge(request).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(RailUnavailableError);
      const retried = await slow.rail.createCharge(request);
      const charges = (await sim.control('GET', '/state')).body.charges as Record<string, { location: string }>;
      expect(Object.keys(charges).filter((id) => id === txid)).to.have.length(1);
      expect(retried).to.include({ chargeId: txid });
      expect(retried.fundingInstruction).to.include({ location: charges[txid].location });
    } finally {
      await slow.client.close();
    }
  });

  it('a malformed body is refused as at a bank, with the violated field', async () => {
    const err = (await charge('10.5').catch((e: unknown) => e)) as RailRejectedError;
    expect(err).to.be.instanceOf(RailRejectedError);
    expect(err.status).to.equal(400);
    expect((err.body as any).violacoes[0].propriedade).to.equal('valor.original');
    // The operator's log and the activity's failure name what the PSP refused and why, not only "invalid body".
    expect(err.message).to.match(/valor\.original: \S/);
    const short = (await charge('10.00', 'tooShort').catch((e: unknown) => e)) as RailRejectedError;
    expect(short.status).to.equal(400);
  });

  it('charge → paid: the notice brings it and the list finds it, the same payment both ways', async () => {
    const created = await charge('42.10');
    const e2e = await pay({ txid: created.chargeId, pagador: { nome: 'Fulano', cpf: '12345678909' } });
    await eventually(
      async () => receiver.payments.get(e2e),
      (p) => p !== undefined,
      10000,
      50,
    );
    const noticed = receiver.payments.get(e2e)!;
    expect(noticed).to.include({ endToEndId: e2e, chargeId: created.chargeId, amount: '42.10', payer: 'Fulano' });
    const listed = await rail.listReceived({ from: new Date(Date.now() - 60_000), to: new Date(Date.now() + 1000) });
    expect(listed.find((p) => p.endToEndId === e2e)).to.deep.equal(noticed);
  });

  it('the same notice twice records one payment', async () => {
    const created = await charge('7.00');
    const before = receiver.answered;
    const e2e = await pay({ txid: created.chargeId, notices: 2 });
    await eventually(
      async () => receiver.answered - before,
      (n) => n >= 2,
      10000,
      50,
    );
    expect([...receiver.payments.keys()].filter((k) => k === e2e)).to.have.length(1);
  });

  it('a notice without a charge or delayed still arrives; a payment with no notice is found by the list', async () => {
    const orphan = await pay({ valor: '3.00', chave: KEY });
    const late = await pay({ txid: (await charge('4.00')).chargeId, delayMs: 300 });
    const silent = await pay({ txid: (await charge('5.00')).chargeId, notices: 0 });
    await eventually(
      async () => receiver.payments.has(orphan) && receiver.payments.has(late),
      (ok) => ok,
      10000,
      50,
    );
    expect(receiver.payments.get(orphan)!.chargeId).to.equal(undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.payments.has(silent)).to.equal(false);
    const listed = await rail.listReceived({ from: new Date(Date.now() - 60_000), to: new Date(Date.now() + 1000) });
    expect(listed.map((p) => p.endToEndId)).to.include.members([orphan, late, silent]);
  });

  it('a notice with a wrong token is refused 401 and records nothing', async () => {
    expect(() => rail.checkNoticeToken('not-the-token')).to.throw(NoticeRejectedError);
    const wrong = await rail.verifyNotice('not-the-token', { pix: [] }).catch((err: unknown) => err);
    expect(wrong).to.be.instanceOf(NoticeRejectedError).with.property('status', 401);
    const created = await charge('8.00');
    await rail.registerNotices(`${receiver.url}/rails/pix/wrong-token`);
    const refusedBefore = receiver.refused;
    try {
      const e2e = await pay({ txid: created.chargeId });
      await eventually(
        async () => receiver.refused - refusedBefore,
        (n) => n >= 1,
        10000,
        50,
      );
      expect(receiver.payments.has(e2e)).to.equal(false);
    } finally {
      await rail.registerNotices(`${receiver.url}/rails/pix/${TOKEN}`);
    }
  });

  it('a notice is read back: only what GET /pix/{e2eid} confirms is received, in the PSP words', async () => {
    const created = await charge('12.34');
    const e2e = await pay({ txid: created.chargeId, notices: 0, pagador: { nome: 'Fulano' } });
    const record = await rail.readReceived(e2e);
    expect(record).to.include({ endToEndId: e2e, txid: created.chargeId, valor: '12.34' });
    const unknown = `E99999008${'202601011200'}${'zzzzzzzzzzz'}`;
    expect(await rail.readReceived(unknown)).to.equal(undefined);
    const at = new Date().toISOString();
    const { confirmed, refused } = await rail.verifyNotice(TOKEN, {
      pix: [
        // The PSP's own words win: the claim's payer and horario are not what is recorded.
        { endToEndId: e2e, txid: created.chargeId, valor: '12.34', horario: '2020-01-01T00:00:00Z' },
        { endToEndId: e2e, txid: created.chargeId, valor: '99.99', horario: at },
        { endToEndId: e2e, txid: txidFor(randomUUID(), randomUUID(), randomUUID()), valor: '12.34', horario: at },
        { endToEndId: unknown, txid: created.chargeId, valor: '12.34', horario: at },
      ],
    });
    expect(confirmed).to.have.length(1);
    expect(confirmed[0]).to.include({ endToEndId: e2e, chargeId: created.chargeId, amount: '12.34', payer: 'Fulano' });
    expect(confirmed[0].receivedAt).to.equal(new Date(record!.horario).toISOString());
    expect(refused.map((r) => r.endToEndId)).to.deep.equal([e2e, e2e, unknown]);
    expect(refused.map((r) => r.reason)).to.satisfy(
      (reasons: string[]) =>
        reasons[0].startsWith('valor differs') &&
        reasons[1].startsWith('txid differs') &&
        reasons[2].includes('no Pix'),
    );

    await sim.control('POST', '/faults', { status: 503, pathPrefix: `/pix/${e2e}`, method: 'GET', count: 1 });
    const down = await rail.verifyNotice(TOKEN, { pix: [{ endToEndId: e2e, valor: '12.34', horario: at }] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(down).to.be.instanceOf(RailUnavailableError);
  });

  it('reconciliation reads every page of the window', async () => {
    const from = new Date();
    const paid = [];
    for (let i = 0; i < 105; i++) paid.push(await pay({ valor: '1.00', chave: KEY, notices: 0 }));
    const listed = await rail.listReceived({ from, to: new Date(Date.now() + 1000) });
    expect(listed.map((p) => p.endToEndId)).to.have.members(paid);
  });

  it('return: PENDING → RETURNED, one return per id; NAO_REALIZADO → FAILED with its reason', async () => {
    const e2e = await pay({ txid: (await charge('20.00')).chargeId, notices: 0 });
    const id = newReturnId();
    const asked = await rail.returnPayment({
      endToEndId: e2e,
      returnId: id,
      amount: '20.00',
      description: 'devolucao',
    });
    expect(asked).to.include({ returnId: id, amount: '20.00', status: 'PENDING' });
    const again = await rail.returnPayment({ endToEndId: e2e, returnId: id, amount: '20.00' });
    expect(again.returnId).to.equal(id);
    await eventually(
      () => rail.returnStatus(e2e, id),
      (r) => r.status === 'RETURNED',
      10000,
      50,
    );
    const listed = await rail.listReceived({ from: new Date(Date.now() - 60_000), to: new Date(Date.now() + 1000) });
    const [listedReturn, ...more] = listed.find((p) => p.endToEndId === e2e)!.returns;
    expect(more).to.deep.equal([]);
    expect(listedReturn).to.deep.include({ returnId: id, amount: '20.00', status: 'RETURNED' });
    // The end-to-end id of the money sent back, the PSP's (D + ISPB + ...), not the Pix's own.
    expect(listedReturn.endToEndId).to.match(/^D[a-zA-Z0-9]{31}$/);

    const refusedE2e = await pay({ txid: (await charge('9.00')).chargeId, notices: 0 });
    await sim.control('POST', '/return-rules', {
      endToEndId: refusedE2e,
      status: 'NAO_REALIZADO',
      motivo: 'conta encerrada',
    });
    const other = newReturnId();
    await rail.returnPayment({ endToEndId: refusedE2e, returnId: other, amount: '9.00' });
    const failed = await eventually(
      () => rail.returnStatus(refusedE2e, other),
      (r) => r.status !== 'PENDING',
      10000,
      50,
    );
    expect(failed).to.deep.include({ returnId: other, amount: '9.00', status: 'FAILED', reason: 'conta encerrada' });
  });

  it('payout REALIZADO: PENDING, then COMPLETED with its end-to-end id', async () => {
    const payoutId = payoutIdFor(randomUUID());
    expect(payoutId).to.match(/^[a-zA-Z0-9]{1,35}$/);
    const sent = await rail.sendPayout({ payoutId, amount: '15.00', key: 'someone@example.com' });
    expect(sent.status).to.equal('PENDING');
    const done = await eventually(
      () => rail.payoutStatus(payoutId),
      (p) => p.status !== 'PENDING',
      10000,
      50,
    );
    expect(done.status).to.equal('COMPLETED');
    expect(done.endToEndId).to.match(/^E[a-zA-Z0-9]{31}$/);
  });

  it('payout NAO_REALIZADO: FAILED with the reason, never COMPLETED', async () => {
    const payoutId = payoutIdFor(randomUUID());
    await rail.sendPayout({ payoutId, amount: '15.00', key: 'payout-fails@example.com' });
    const done = await eventually(
      () => rail.payoutStatus(payoutId),
      (p) => p.status !== 'PENDING',
      10000,
      50,
    );
    expect(done.status).to.equal('FAILED');
    expect(done.reason).to.be.a('string');
  });

  it('a payout whose first PUT times out after the PSP took it: the same idEnvio again is one payout', async () => {
    const slow = connect(400);
    try {
      const payoutId = payoutIdFor(randomUUID());
      const key = `once-${randomUUID()}@example.com`;
      await sim.control('POST', '/faults', {
        method: 'PUT',
        pathPrefix: `/v3/gn/pix/${payoutId}`,
        afterHandling: true,
        hangMs: 1500,
        count: 1,
      });
      // The PUT timed out: its idEnvio is read back (decision 0108), and what the PSP holds is the answer.
      const first = await slow.rail.sendPayout({ payoutId, amount: '33.00', key });
      expect(first.payoutId).to.equal(payoutId);
      expect(first.status).to.be.oneOf(['PENDING', 'COMPLETED']);
      const retried = await slow.rail.sendPayout({ payoutId, amount: '33.00', key });
      expect(retried.payoutId).to.equal(payoutId);
      const state = (await sim.control('GET', '/state')).body;
      const atPsp = Object.values(state.payouts as Record<string, any>).filter((p) => p.favorecido.chave === key);
      expect(atPsp).to.have.length(1);
      expect(atPsp[0].idEnvio).to.equal(payoutId);
    } finally {
      await slow.client.close();
    }
  });

  it('payout answers that are not final are read back; a refusal with nothing under the idEnvio is final', async () => {
    const send = (payoutId: string) => rail.sendPayout({ payoutId, amount: '2.00', key: 'answers@example.com' });
    const fault = (payoutId: string, f: Record<string, unknown>) =>
      sim.control('POST', '/faults', { method: 'PUT', pathPrefix: `/v3/gn/pix/${payoutId}`, count: 1, ...f });
    // Taken, answered with nothing final: what the PSP holds is the answer.
    for (const answer of [
      { status: 202, body: '' },
      { status: 201, body: { status: 'PROCESSANDO' } },
      { status: 201, body: '' },
      { status: 400, body: { title: 'EnvioInvalido' } },
    ]) {
      const id = payoutIdFor(randomUUID());
      await fault(id, { afterHandling: true, ...answer });
      expect(await send(id), JSON.stringify(answer)).to.deep.include({ payoutId: id, status: 'PENDING' });
    }
    // Not taken, answered 202: unknown, retried; the retry sends the same PUT, one payout.
    const lost = payoutIdFor(randomUUID());
    await fault(lost, { status: 202, body: '' });
    expect(await send(lost).catch((e: unknown) => e)).to.be.instanceOf(RailUnavailableError);
    expect(await rail.followPayout({ payoutId: lost, amount: '2.00', key: 'answers@example.com' })).to.deep.include({
      payoutId: lost,
      status: 'PENDING',
    });
    // Refused, and nothing under the idEnvio: the PSP's final answer.
    const refused = payoutIdFor(randomUUID());
    await fault(refused, { status: 422 });
    const err = (await send(refused).catch((e: unknown) => e)) as RailRejectedError;
    expect(err).to.be.instanceOf(RailRejectedError);
    expect(err.status).to.equal(422);
    const payouts = (await sim.control('GET', '/state')).body.payouts as Record<string, unknown>;
    expect(Object.keys(payouts)).to.include(lost).and.not.include(refused);

    // Acknowledged (EM_PROCESSAMENTO), then the PSP's read side shows nothing and it refuses the repeated idEnvio:
    // no final answer, since the first PUT may still pay. Pending (retried, listed as stuck), never a refusal.
    const acked = payoutIdFor(randomUUID());
    expect(await send(acked)).to.deep.include({ payoutId: acked, status: 'PENDING' });
    await sim.control('POST', '/faults', {
      method: 'GET',
      pathPrefix: `/v2/gn/pix/enviados/id-envio/${acked}`,
      count: 2, // the follow's read, and the read after the repeated PUT
      status: 404,
    });
    await fault(acked, { status: 422 });
    const again = await rail
      .followPayout({ payoutId: acked, amount: '2.00', key: 'answers@example.com' })
      .catch((e) => e);
    expect(again).to.be.instanceOf(RailUnavailableError);
    expect(again).to.not.be.instanceOf(RailRejectedError);
  });

  it('a payout answered NAO_REALIZADO is read back before it is final: one the PSP took is never FAILED', async () => {
    const key = 'not-made-answers@example.com';
    const send = (payoutId: string) => rail.sendPayout({ payoutId, amount: '3.00', key });
    const fault = (payoutId: string, f: Record<string, unknown>) =>
      sim.control('POST', '/faults', { method: 'PUT', pathPrefix: `/v3/gn/pix/${payoutId}`, count: 1, ...f });
    // Taken by the PSP, answered "not made" (for this idEnvio, or naming another): what it holds is the answer.
    for (const named of ['self', 'other']) {
      const id = payoutIdFor(randomUUID());
      const idEnvio = named === 'self' ? id : payoutIdFor(randomUUID());
      await fault(id, { afterHandling: true, status: 200, body: { idEnvio, status: 'NAO_REALIZADO' } });
      const state = await send(id);
      expect(state.payoutId, named).to.equal(id);
      expect(state.status, named).to.be.oneOf(['PENDING', 'COMPLETED']);
    }
    // Not taken, "not made", nothing under the idEnvio: final, the hold may go back.
    const never = payoutIdFor(randomUUID());
    await fault(never, { status: 200, body: { idEnvio: never, status: 'NAO_REALIZADO', motivo: 'Chave invalida' } });
    expect(await send(never)).to.deep.include({ payoutId: never, status: 'FAILED' });
    // Acknowledged, then its repeated PUT answered "not made" while the read side shows nothing: pending, not FAILED.
    const acked = payoutIdFor(randomUUID());
    expect(await send(acked)).to.deep.include({ payoutId: acked, status: 'PENDING' });
    await sim.control('POST', '/faults', {
      method: 'GET',
      pathPrefix: `/v2/gn/pix/enviados/id-envio/${acked}`,
      count: 3, // the follow's read, the read after the repeated PUT, and the read that confirms
      status: 404,
    });
    await fault(acked, { status: 200, body: { idEnvio: acked, status: 'NAO_REALIZADO' } });
    const again = await rail.followPayout({ payoutId: acked, amount: '3.00', key }).catch((e: unknown) => e);
    expect(again).to.be.instanceOf(RailUnavailableError);
  });

  it('a return answered NAO_REALIZADO is read back before it is final: one the PSP took is never FAILED', async () => {
    const e2e = await pay({ txid: (await charge('12.00')).chargeId, notices: 0 });
    const id = newReturnId();
    await sim.control('POST', '/faults', {
      method: 'PUT',
      pathPrefix: `/pix/${e2e}/devolucao/${id}`,
      count: 1,
      afterHandling: true,
      status: 200,
      body: { id, status: 'NAO_REALIZADO' },
    });
    const asked = await rail.returnPayment({ endToEndId: e2e, returnId: id, amount: '12.00' });
    expect(asked.returnId).to.equal(id);
    expect(asked.status).to.be.oneOf(['PENDING', 'RETURNED']);
  });

  it('return answers that are not final are read back; a lost return is asked again under its id', async () => {
    const e2e = await pay({ txid: (await charge('30.00')).chargeId, notices: 0 });
    const request = (returnId: string, amount = '10.00') => ({ endToEndId: e2e, returnId, amount });
    const fault = (returnId: string, f: Record<string, unknown>) =>
      sim.control('POST', '/faults', {
        method: 'PUT',
        pathPrefix: `/pix/${e2e}/devolucao/${returnId}`,
        count: 1,
        ...f,
      });
    const taken = newReturnId();
    await fault(taken, { afterHandling: true, status: 201, body: '' });
    expect(await rail.returnPayment(request(taken))).to.deep.include({ returnId: taken, status: 'PENDING' });
    const lost = newReturnId();
    await fault(lost, { status: 202, body: '' });
    expect(await rail.returnPayment(request(lost)).catch((e: unknown) => e)).to.be.instanceOf(RailUnavailableError);
    expect(await rail.followReturn(request(lost))).to.deep.include({ returnId: lost, amount: '10.00' });
    // More than the Pix holds: refused, nothing under the id.
    const err = await rail.returnPayment(request(newReturnId(), '99.00')).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RailRejectedError);
  });

  it('a PSP that answers 5xx or hangs is RailUnavailableError, which a caller retries', async () => {
    await sim.control('POST', '/faults', { status: 503, count: 1, pathPrefix: '/cob/' });
    const down = (await charge('1.00').catch((e: unknown) => e)) as RailUnavailableError;
    expect(down).to.be.instanceOf(RailUnavailableError);
    expect(down.retryAfterSeconds).to.equal(1);
    const slow = connect(300);
    try {
      await sim.control('POST', '/faults', { hangMs: 1000, count: 1, pathPrefix: '/cob/' });
      const hung = await slow.rail
        .createCharge({ chargeId: txidFor(randomUUID(), 'x', randomUUID()), amount: '1.00', expiresInSeconds: 60 })
        .catch((e: unknown) => e);
      expect(hung).to.be.instanceOf(RailUnavailableError);
    } finally {
      await slow.client.close();
    }
  });

  it("is laid out as API Pix's servers: the API under /api, the token at the origin, nothing at the root", async () => {
    const basic = Buffer.from(`${SIM_CLIENT.id}:${SIM_CLIENT.secret}`).toString('base64');
    const askToken = (url: string) =>
      fetch(url, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
    expect((await askToken(`${sim.apiUrl}/oauth/token`)).status, 'no token under the API').to.equal(404);
    const given = await askToken(`${sim.url}/oauth/token`);
    expect(given.status).to.equal(200);
    const bearer = { authorization: `Bearer ${((await given.json()) as { access_token: string }).access_token}` };
    const window = `inicio=${new Date(Date.now() - 60_000).toISOString()}&fim=${new Date().toISOString()}`;
    expect((await fetch(`${sim.apiUrl}/pix?${window}`, { headers: bearer })).status).to.equal(200);
    expect((await fetch(`${sim.url}/pix?${window}`, { headers: bearer })).status, 'nothing at the root').to.equal(404);
    // Cambio's client, given the API's base alone, finds the token at the origin (decision 0256).
    expect(client.tokensFetched).to.be.greaterThan(0);
  });

  it('OAuth2: one token for many calls, fetched again once after a 401', async () => {
    const fresh = connect();
    try {
      for (let i = 0; i < 3; i++) await fresh.rail.payoutStatus((await sendOne(fresh.rail)).payoutId);
      expect(fresh.client.tokensFetched).to.equal(1);
      await sim.control('POST', '/tokens/revoke');
      await fresh.rail.listReceived({ from: new Date(Date.now() - 1000), to: new Date() });
      expect(fresh.client.tokensFetched).to.equal(2);
      const wrong = new PixClient({
        baseUrl: sim.apiUrl,
        clientId: SIM_CLIENT.id,
        clientSecret: 'nope',
        timeoutMs: 2000,
      });
      const err = await wrong.request('GET', '/pix').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(RailUnavailableError);
      await wrong.close();
    } finally {
      await fresh.client.close();
    }
  });
});

function sendOne(rail: PixRail) {
  return rail.sendPayout({ payoutId: payoutIdFor(randomUUID()), amount: '1.00', key: 'a@example.com' });
}
