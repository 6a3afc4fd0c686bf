// A PSP notice is a claim, not money (decisions.md, "A claim is not money"; decision 0107). Anyone who learns the
// notice URL can POST to it; only what the PSP's own record (`GET /pix/{e2eid}` at the run's simulated PSP, a real
// child process) confirms is recorded. Forged items are refused and leave the deposit waiting and the balance as it
// was; malformed items are 400 and nothing of their notice is recorded; a PSP that cannot be asked is 503 with
// Retry-After and nothing is recorded; a wrong token is 401 before the body is read; the route has its own rate
// limit; the token never reaches a log; and `cambio books check` still closes.
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { balance, quote, untilStatus } from '../helpers/money';
import { cambio } from '../helpers/cli';
import { kill, spawnApi } from '../helpers/processes';
import { eventually, newCustomer, stack, type TestCustomer } from '../helpers/stack';

async function paymentsWith(endToEndId: string) {
  const { services } = await stack();
  return (await systemEm(services.orm).execute(
    `select status, customer_id, operation_id, amount::numeric(20, 2)::text as amount
     from inbound_payments where end_to_end_id = ?`,
    [endToEndId],
  )) as { status: string; customer_id: string | null; operation_id: string | null; amount: string }[];
}

/** An end-to-end id in the SPI's format that no PSP ever issued. */
const forgedE2e = () => `E12345678202612010000${randomBytes(8).toString('hex').slice(0, 11)}`;

const item = (endToEndId: string, valor: string, txid?: string) => ({
  endToEndId,
  ...(txid ? { txid } : {}),
  valor,
  horario: new Date().toISOString(),
});

describe('PIX notices are claims: read back from the PSP before they are money', function () {
  this.timeout(120000);
  let c: TestCustomer;
  let accountId: string;

  const notice = async (body: unknown, token?: string, base?: string) => {
    const { noticeBaseUrl, config } = await stack();
    return fetch(`${base ?? noticeBaseUrl}/rails/pix/${token ?? config.pix.webhookToken}/pix`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  };
  const json = async (res: Response) => ({ status: res.status, headers: res.headers, body: (await res.json()) as any });

  /** A PIX deposit waiting for its payment, and its charge's txid. */
  const openPixDeposit = async (value: string) => {
    const { http } = await stack();
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
    const res = await http
      .post('/api/operations/deposit')
      .set(c.auth)
      .set('X-Idempotency-Key', randomUUID())
      .send({ accountId, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { id: res.body.id as string, txid: res.body.intent.fundingInstruction.txid as string };
  };

  /** A Pix the PSP really received, with no notice sent (the test posts what it wants). */
  const paidAtPsp = async (body: Record<string, unknown>) => {
    const { psp, config } = await stack();
    const res = await psp.control('POST', '/pix', { chave: config.pix.receivingKey, ...body, notices: 0 });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as { endToEndId: string; horario: string; valor: string; txid?: string };
  };

  before(async () => {
    c = await newCustomer('Pix Claims Ltda');
    accountId = (await activeAccount(c, ['BRL'])).id;
  });

  after(async () => {
    const { psp } = await stack();
    await psp.control('DELETE', '/faults');
  });

  it("a forged notice for a deposit's txid is refused: nothing recorded, deposit waits, balance the same", async () => {
    const before = await balance(c, accountId, 'BRL');
    const dep = await openPixDeposit('50.00');
    // A Pix the PSP never saw, for the deposit's txid and its exact amount.
    const never = forgedE2e();
    // A real Pix (1.00, no charge) claimed as the deposit's 50.00: the PSP's record says otherwise.
    const real = await paidAtPsp({ valor: '1.00' });
    for (const forged of [item(never, '50.00', dep.txid), item(real.endToEndId, '50.00', dep.txid)]) {
      const res = await json(await notice({ pix: [forged] }));
      expect(res.status, JSON.stringify(res.body)).to.equal(422);
      expect(res.body.code).to.equal('NOTICE_NOT_CONFIRMED');
      expect(res.body.details.received).to.equal(0);
      expect(res.body.details.refused.map((r: { endToEndId: string }) => r.endToEndId)).to.deep.equal([
        forged.endToEndId,
      ]);
    }
    expect(await paymentsWith(never)).to.deep.equal([]);
    expect(await paymentsWith(real.endToEndId), 'the real Pix is not recorded as the claim said').to.deep.equal([]);
    await new Promise((r) => setTimeout(r, 300));
    const op = await untilStatus(c, dep.id, 'REQUESTED');
    expect(op.transactions).to.deep.equal([]);
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });

  it("a confirmed and a forged item: the PSP's is recorded in its words, 422 names the other", async () => {
    const dep = await openPixDeposit('20.00');
    const real = await paidAtPsp({ txid: dep.txid, pagador: { nome: 'Fulano', cpf: '12345678909' } });
    const never = forgedE2e();
    // The claim's horario is not the PSP's: the record takes the PSP's.
    const claimed = { ...item(real.endToEndId, '20.00', dep.txid), horario: '2020-01-01T00:00:00Z' };
    const res = await json(await notice({ pix: [claimed, item(never, '20.00', dep.txid)] }));
    expect(res.status, JSON.stringify(res.body)).to.equal(422);
    expect(res.body.details).to.deep.include({ received: 1 });
    expect(res.body.details.refused.map((r: { endToEndId: string }) => r.endToEndId)).to.deep.equal([never]);
    expect(await paymentsWith(never)).to.deep.equal([]);
    const done = await untilStatus(c, dep.id, 'COMPLETED');
    expect(done.transactions.map((t: { amount: { value: string } }) => t.amount.value)).to.deep.equal(['20.00']);
    expect(await paymentsWith(real.endToEndId)).to.deep.equal([
      { status: 'MATCHED', customer_id: c.customerId, operation_id: dep.id, amount: '20.00' },
    ]);
    // The PSP sends the same notice again (it got no 200): the same one payment, still one credit.
    const again = await json(await notice({ pix: [claimed] }));
    expect([again.status, again.body]).to.deep.equal([200, { received: 1 }]);
    expect(await paymentsWith(real.endToEndId)).to.have.length(1);
    expect((await untilStatus(c, dep.id, 'COMPLETED')).transactions).to.have.length(1);
  });

  it('malformed items are 400 with the reason, and nothing of their notice is recorded (never a 500)', async () => {
    const dep = await openPixDeposit('30.00');
    const real = await paidAtPsp({ txid: dep.txid });
    const good = item(real.endToEndId, '30.00', dep.txid);
    const cases: [Record<string, unknown>, string][] = [
      [{ ...good, valor: '-5.001' }, '/pix/1/valor'],
      [{ ...good, valor: '0.00' }, '/pix/1/valor'],
      [{ ...good, horario: 'not-a-date' }, '/pix/1/horario'],
      [{ ...good, horario: '2026-02-30T10:00:00Z' }, '/pix/1/horario'],
      [{ ...good, endToEndId: 'E123' }, '/pix/1/endToEndId'],
      [{ ...good, txid: 42 }, '/pix/1/txid'],
    ];
    for (const [bad, path] of cases) {
      // The well-formed (and real) first item is not recorded either: the notice is refused whole.
      const res = await json(await notice({ pix: [good, bad] }));
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.code).to.equal('VALIDATION_ERROR');
      expect(res.body.details.errors.map((e: { path: string }) => e.path)).to.deep.equal([path]);
      expect(res.body.message).to.contain(path);
    }
    expect(await paymentsWith(real.endToEndId)).to.deep.equal([]);
    expect((await untilStatus(c, dep.id, 'REQUESTED')).transactions).to.deep.equal([]);
    for (const body of [{ pix: 'x' }, { pix: [null] }, [], 'null']) {
      const res = await notice(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
    }
  });

  it("a PSP's test POST (Efí's teste_webhook, at the registered URL or /pix) is 200, credits nothing", async () => {
    const { noticeBaseUrl, config } = await stack();
    const before = await balance(c, accountId, 'BRL');
    const dep = await openPixDeposit('7.00');
    const token = config.pix.webhookToken;
    // Efí POSTs its test to the URL as registered (`/pix` is appended only to real notices) and refuses the
    // registration without a 2xx; other PSPs test with an empty body or an empty list.
    const post = (path: string, body?: unknown, tok = token) =>
      fetch(`${noticeBaseUrl}/rails/pix/${tok}${path}`, {
        method: 'POST',
        ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
      });
    for (const path of ['', '/pix']) {
      for (const body of [{ evento: 'teste_webhook' }, {}, undefined, { pix: [] }]) {
        const res = await post(path, body);
        expect([res.status, await res.json()], `${path} ${JSON.stringify(body)}`).to.deep.equal([200, { received: 0 }]);
      }
      // The test is authenticated as a notice is: a wrong token is 401 at either path.
      expect((await post(path, { evento: 'teste_webhook' }, 'not-the-token')).status, path).to.equal(401);
    }
    // A claim at the registered URL is a claim still: a forged one is refused, and a body that names `pix`
    // wrongly is 400, as at /pix.
    const forged = await post('', { pix: [item(forgedE2e(), '7.00', dep.txid)] });
    expect(forged.status).to.equal(422);
    expect((await post('', { pix: 'x', evento: 'teste_webhook' })).status).to.equal(400);
    expect((await untilStatus(c, dep.id, 'REQUESTED')).transactions).to.deep.equal([]);
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });

  it('the sandbox route pays through the PSP only with an end-to-end id a notice can carry', async () => {
    const { http } = await stack();
    const dep = await openPixDeposit('8.00');
    const pay = (endToEndId?: string) =>
      http
        .post(`/api/sandbox/operations/${dep.id}/inbound-payment`)
        .set(c.auth)
        .set('X-Idempotency-Key', randomUUID())
        .send({ amount: { value: '8.00', asset: 'BRL' }, ...(endToEndId ? { endToEndId } : {}) });
    const refused = await pay(`E${randomUUID().replace(/-/g, '').slice(0, 31)}`);
    expect([refused.status, refused.body.code], JSON.stringify(refused.body)).to.deep.equal([400, 'VALIDATION_ERROR']);
    expect(refused.body.details.errors[0].path).to.equal('/endToEndId');
    // Without one, the sandbox names it in the SPI's format, and the PSP's notice is recorded.
    const paid = await pay();
    expect([paid.status, paid.body.status], JSON.stringify(paid.body)).to.deep.equal([200, 'MATCHED']);
    expect(paid.body.endToEndId).to.match(/^E\d{8}\d{12}[a-zA-Z0-9]{11}$/);
  });

  it('a PSP that cannot be asked: 503 with Retry-After and nothing recorded; the PSP retry records it', async () => {
    const { psp } = await stack();
    const dep = await openPixDeposit('12.00');
    const real = await paidAtPsp({ txid: dep.txid });
    const body = { pix: [item(real.endToEndId, '12.00', dep.txid)] };
    // Down (503), or an answer that is neither the Pix nor 404 (403): the PSP did not tell us, so nothing is money yet.
    for (const status of [503, 403]) {
      await psp.control('POST', '/faults', { method: 'GET', pathPrefix: '/pix/', count: 1, status });
      const res = await json(await notice(body));
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body.code).to.equal('SERVICE_UNAVAILABLE');
      expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
      expect(await paymentsWith(real.endToEndId)).to.deep.equal([]);
    }
    await psp.control('DELETE', '/faults');
    const retried = await json(await notice(body));
    expect([retried.status, retried.body]).to.deep.equal([200, { received: 1 }]);
    await untilStatus(c, dep.id, 'COMPLETED');
  });

  it('a PSP record whose devolucoes Cambio cannot read: the Pix is recorded and credited, never a 500', async () => {
    const { psp } = await stack();
    const dep = await openPixDeposit('13.00');
    const real = await paidAtPsp({ txid: dep.txid });
    // The PSP's own record, its returns written as an object: they are a shortcut (each return of ours reads its
    // own state at the PSP), the Pix is what is money.
    const record = { ...real, devolucoes: { id: 'x' } };
    await psp.control('POST', '/faults', { method: 'GET', pathPrefix: '/pix/', count: 1, status: 200, body: record });
    const res = await json(await notice({ pix: [item(real.endToEndId, '13.00', dep.txid)] }));
    expect([res.status, res.body]).to.deep.equal([200, { received: 1 }]);
    await untilStatus(c, dep.id, 'COMPLETED');
    expect((await paymentsWith(real.endToEndId)).map((p) => p.status)).to.deep.equal(['MATCHED']);
  });

  it('a wrong token is 401 before the body is read: an unparseable or non-JSON body changes nothing', async () => {
    const wrong = await json(await notice('{"pix": [ this is not json', 'not-the-token'));
    expect([wrong.status, wrong.body.code]).to.deep.equal([401, 'UNAUTHORIZED']);
    const { noticeBaseUrl, config } = await stack();
    const text = await fetch(`${noticeBaseUrl}/rails/pix/not-the-token/pix`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'hello',
    });
    expect(text.status).to.equal(401);
    // The right token with the same body: the body is read, and refused as JSON.
    const right = await json(await notice('{"pix": [ this is not json'));
    expect([right.status, right.body.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
    // A token one character off, and one of another length: both 401.
    const token = config.pix.webhookToken;
    for (const other of [`${token.slice(0, -1)}x`, `${token}x`, token.slice(0, 5)]) {
      expect((await notice({ pix: [] }, other)).status, other).to.equal(401);
    }
  });

  it('no other spelling of the notice path reaches its handler past the gate: upper case, trailing slash', async () => {
    const { noticeBaseUrl, config, http } = await stack();
    const dep = await openPixDeposit('9.00');
    const token = config.pix.webhookToken;
    // Each would have been routed by a case-insensitive, non-strict router while the gate, matching the exact path,
    // let it through unlimited with its body parsed before the token was checked.
    for (const path of [`/RAILS/PIX/${token}/PIX`, `/rails/pix/${token}/pix/`, `/Rails/pix/not-the-token/pix`]) {
      const res = await fetch(`${noticeBaseUrl}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ pix: [item(forgedE2e(), '9.00', dep.txid)] }),
      });
      expect(res.status, path).to.equal(404);
    }
    // The customer gate admits by the `/api/` prefix: an upper-case prefix reaches no route either.
    expect(
      (await http.post('/API/quotes').set(c.auth).set('X-Idempotency-Key', randomUUID()).send({})).status,
    ).to.equal(404);
    expect((await http.get(`/API/operations/${dep.id}`).set(c.auth)).status).to.equal(404);
  });

  it('an API process: the token never reaches its log, and the notice route has its own rate limit (429)', async () => {
    const token = `tok${randomBytes(16).toString('hex')}`;
    const api = await spawnApi('api-pix-notice-claims', `cambio-test-notices-${randomUUID()}`, {
      LOG_LEVEL: 'debug',
      PIX_WEBHOOK_TOKEN: token,
      PIX_NOTICE_RATE_PER_SECOND: '1',
      PIX_NOTICE_RATE_BURST: '4',
    });
    try {
      const ok = await notice({ pix: [] }, token, api.url);
      expect([ok.status, await ok.json()]).to.deep.equal([200, { received: 0 }]);
      const forged = await json(await notice({ pix: [item(forgedE2e(), '5.00')] }, token, api.url));
      expect(forged.status, JSON.stringify(forged.body)).to.equal(422);
      expect((await notice({ pix: [{ endToEndId: 'x' }] }, token, api.url)).status).to.equal(400);
      expect((await notice('nope', `${token}x`, api.url)).status).to.equal(401);
      await eventually(
        async () => api.fullOutput(),
        (out) => (out.match(/\/rails\/pix\/<token>\/pix/g) ?? []).length >= 4,
        10000,
        50,
      );
      const out = api.fullOutput();
      expect(out).to.contain('PIX notice item the PSP does not confirm');
      expect(out, 'the token is in no log line').to.not.contain(token.slice(3, 20));

      // Past its own rate (4 at once, then 1 a second per address): 429 with Retry-After, before the token.
      const statuses: number[] = [];
      let limited: Response | undefined;
      for (let i = 0; i < 12 && !limited; i++) {
        const res = await notice({ pix: [] }, i % 2 ? token : 'not-the-token', api.url);
        statuses.push(res.status);
        if (res.status === 429) limited = res;
      }
      expect(limited, statuses.join(',')).to.not.equal(undefined);
      const body = (await limited!.json()) as { code: string };
      expect(body.code).to.equal('RATE_LIMITED');
      expect(Number(limited!.headers.get('retry-after'))).to.be.greaterThan(0);
    } finally {
      await kill(api);
    }
  });

  it('cambio books check still closes after forged, refused and retried notices', async () => {
    const ran = await cambio('books', 'check', '--asset', 'BRL', '--json');
    const books = JSON.parse(ran.stdout) as { ok: boolean };
    expect(books.ok, ran.stdout).to.equal(true);
  });
});
