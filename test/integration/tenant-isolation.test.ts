// An attacker holding one customer's valid token (B) against another customer's (A) records: every id of A's, in a
// path or in a body, reads as absent (404 NOT_FOUND, or the operation's own "not found" code), every list and
// report shows B's rows only, and B's idempotency keys never answer with A's stored answers.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { activeAccount, uboBody } from '../helpers/fixtures';
import { fund, quote } from '../helpers/money';
import { approvedInstruction, beneficiaryBody, referenceBeneficiary } from '../helpers/beneficiary-fixtures';
import { Receiver } from '../helpers/receiver';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';

describe('tenant isolation: one customer against another', function () {
  this.timeout(120000);

  let a: TestCustomer;
  let b: TestCustomer;
  let accountA: string;
  let accountB: string;
  let depositA: string;
  let quoteA: string;
  let beneficiaryA: string;
  let instructionA: string;
  let subscriptionA: string;
  let logA: string;
  let eventA: string;
  let paymentA: string;
  const receiver = new Receiver();

  before(async () => {
    const { http } = await stack();
    await receiver.start();
    [a, b] = await Promise.all([newCustomer('Alpha Ltda'), newCustomer('Beta Ltda')]);
    const sub = await http
      .post('/api/subscriptions')
      .set(a.auth)
      .set(idem())
      .send({ url: receiver.url, includeAll: true });
    expect(sub.status, JSON.stringify(sub.body)).to.equal(201);
    subscriptionA = sub.body.id;
    [accountA, accountB] = (await Promise.all([activeAccount(a), activeAccount(b)])).map((x) => x.id);
    await Promise.all([fund(a, accountA, 'BRL', '500.00'), fund(b, accountB, 'BRL', '500.00')]);
    const q = await quote(a, { accountId: accountA, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '10.00' });
    const dep = await http
      .post('/api/operations/deposit')
      .set(a.auth)
      .set(idem())
      .send({ accountId: accountA, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } });
    expect(dep.status).to.equal(201);
    depositA = dep.body.id;
    quoteA = (await quote(a, { accountId: accountA, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '5.00' })).id;
    ({ beneficiaryId: beneficiaryA, instructionId: instructionA } = await approvedInstruction(a, {
      dictKeyType: 'EMAIL',
      dictKey: 'alpha@example.com',
    }));
    const logs = await eventually(
      async () => (await http.get(`/api/subscriptions/${subscriptionA}/executionLogs`).set(a.auth)).body,
      // Two at least: the test of a log cursor on another subscription needs a page after the first.
      (page) => page.data?.length > 1,
    );
    logA = logs.data[0].id;
    eventA = (await http.get('/api/events').set(a.auth)).body.data[0].id;
    paymentA = (await http.get('/api/inbound-payments').set(a.auth)).body.data[0].id;
  });

  after(() => receiver.stop());

  const expectNotFound = (res: { status: number; body: { code?: string } }, what: string) => {
    expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(404);
    expect(res.body.code, what).to.equal('NOT_FOUND');
  };

  it("reads none of another customer's records by id", async () => {
    const { http } = await stack();
    const paths = [
      `/api/accounts/${accountA}`,
      `/api/accounts/${accountA}/balances`,
      `/api/accounts/${accountA}/statement?asset=BRL&periodStart=2020-01-01T00:00:00Z&periodEnd=2030-01-01T00:00:00Z`,
      `/api/operations/${depositA}`,
      `/api/beneficiaries/${beneficiaryA}`,
      `/api/subscriptions/${subscriptionA}`,
      `/api/subscriptions/${subscriptionA}/executionLogs`,
      `/api/subscriptions/${subscriptionA}/executionLogs/${logA}`,
      `/api/subscriptions/${subscriptionA}/executionLogs/${logA}/attempts`,
      `/api/events/${eventA}`,
      `/api/inbound-payments/${paymentA}`,
    ];
    for (const path of paths) expectNotFound(await http.get(path).set(b.auth), path);
  });

  it("acts on none of another customer's records by id in a path", async () => {
    const { http } = await stack();
    const posts: Array<[string, object]> = [
      [`/api/accounts/${accountA}/ubos`, uboBody()],
      [`/api/accounts/${accountA}/review`, {}],
      [`/api/sandbox/accounts/${accountA}/review`, { decision: 'REJECT' }],
      [`/api/sandbox/payment-instructions/${instructionA}/review`, { decision: 'REJECT' }],
      [`/api/sandbox/operations/${depositA}/inbound-payment`, { amount: { value: '10.00', asset: 'BRL' } }],
      [`/api/sandbox/operations/${depositA}/hold-review`, { decision: 'REJECT' }],
      [`/api/subscriptions/${subscriptionA}/rotate-secret`, {}],
      [`/api/subscriptions/${subscriptionA}/executionLogs/${logA}/redeliver`, {}],
      [`/api/subscriptions/${subscriptionA}/recover`, { since: new Date(Date.now() - 3600_000).toISOString() }],
    ];
    for (const [path, body] of posts) {
      expectNotFound(await http.post(path).set(b.auth).set(idem()).send(body), path);
    }
    expectNotFound(
      await http.patch(`/api/subscriptions/${subscriptionA}`).set(b.auth).set(idem()).send({ allowRetry: true }),
      'PATCH subscription',
    );
    expectNotFound(await http.delete(`/api/subscriptions/${subscriptionA}`).set(b.auth), 'DELETE subscription');
    const pi = await http
      .post(`/api/beneficiaries/${beneficiaryA}/payment-instructions`)
      .set(b.auth)
      .set(idem())
      .send({ type: 'PIX', asset: 'BRL', dictKeyType: 'EMAIL', dictKey: 'beta@example.com' });
    expectNotFound(pi, 'add payment instruction');
    // A's records are as they were.
    const sub = await http.get(`/api/subscriptions/${subscriptionA}`).set(a.auth);
    expect(sub.status).to.equal(200);
    const dep = await http.get(`/api/operations/${depositA}`).set(a.auth);
    expect(dep.body.currentState.status).to.equal('REQUESTED');
  });

  it("uses none of another customer's ids in a body", async () => {
    const { http } = await stack();
    const quoteRes = await http
      .post('/api/quotes')
      .set(b.auth)
      .set(idem())
      .send({ accountId: accountA, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '1.00' });
    expectNotFound(quoteRes, 'quote on A account');
    const swap = await http
      .post('/api/operations/swap')
      .set(b.auth)
      .set(idem())
      .send({ accountId: accountB, quoteId: quoteA });
    expect(swap.status, JSON.stringify(swap.body)).to.equal(422);
    expect(swap.body.code).to.equal('QUOTE_NOT_FOUND');
    const own = await quote(b, { accountId: accountB, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '1.00' });
    const withdrawal = await http
      .post('/api/operations/withdrawal')
      .set(b.auth)
      .set(idem())
      .send({ accountId: accountB, quoteId: own.id, beneficiary: referenceBeneficiary(beneficiaryA, instructionA) });
    expectNotFound(withdrawal, 'withdrawal to A beneficiary');
    for (const [source, target] of [
      [accountB, accountA],
      [accountA, accountB],
    ]) {
      const transfer = await http
        .post('/api/operations/transfer')
        .set(b.auth)
        .set(idem())
        .send({ sourceAccountId: source, targetAccountId: target, amount: { value: '1.00', asset: 'BRL' } });
      expectNotFound(transfer, `transfer ${source} -> ${target}`);
    }
    const balances = (await http.get(`/api/accounts/${accountA}/balances`).set(a.auth)).body.balances;
    expect(balances.find((x: { asset: string }) => x.asset === 'BRL').total.value).to.equal('500.00');
  });

  it('lists, filters and reports show only the caller', async () => {
    const { http } = await stack();
    for (const path of [
      '/api/accounts',
      '/api/operations',
      '/api/beneficiaries',
      '/api/subscriptions',
      '/api/events',
      '/api/inbound-payments',
      '/api/statements',
    ]) {
      const res = await http.get(path).query({ limit: 100 }).set(b.auth);
      expect(res.status, path).to.equal(200);
      const ids = JSON.stringify(res.body.data);
      for (const id of [accountA, depositA, beneficiaryA, subscriptionA, eventA, paymentA]) {
        expect(ids, `${path} shows ${id}`).not.to.include(id);
      }
      if (path !== '/api/statements')
        expect(res.body.data.every((x: object) => !JSON.stringify(x).includes(a.customerId))).to.equal(true);
    }
    const filtered = await http
      .get('/api/operations')
      .query({ filters: `account.id[eq]=${accountA}` })
      .set(b.auth);
    expect(filtered.status).to.equal(200);
    expect(filtered.body.data).to.deep.equal([]);
    expect(filtered.body.meta.total).to.equal(0);
    const byCustomer = await http
      .get('/api/operations')
      .query({ filters: `customerId[eq]=${a.customerId}` })
      .set(b.auth);
    expect(byCustomer.status).to.equal(400);
    expect(byCustomer.body.code).to.equal('INVALID_FILTER');
    const report = await http
      .get('/api/reports')
      .query({
        periodStart: '2020-01-01T00:00:00Z',
        periodEnd: '2030-01-01T00:00:00Z',
        filters: `account.id[eq]=${accountA}`,
      })
      .set(b.auth);
    expect(report.status).to.equal(200);
    expect(report.body.totals).to.deep.equal([]);
  });

  it("a cursor pages only the list that issued it, not another customer's, list's or parent's", async () => {
    const { http } = await stack();
    const expectInvalidCursor = (res: { status: number; body: { code?: string } }, what: string) => {
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.code, what).to.equal('INVALID_CURSOR');
    };
    const pageA = await http.get('/api/operations').query({ limit: 1 }).set(a.auth);
    const cursor = pageA.body.meta.nextCursor;
    expect(cursor).to.be.a('string');
    // The cursor pages A's own list on.
    const own = await http.get('/api/operations').query({ limit: 1, cursor }).set(a.auth);
    expect(own.status, JSON.stringify(own.body)).to.equal(200);
    expectInvalidCursor(await http.get('/api/operations').query({ cursor }).set(b.auth), "A's cursor in B's list");
    expectInvalidCursor(await http.get('/api/accounts').query({ cursor }).set(a.auth), 'operations cursor on accounts');
    expectInvalidCursor(await http.get('/api/events').query({ cursor }).set(a.auth), 'operations cursor on events');
    // Two subscriptions of one customer: a cursor of one's logs does not page the other's.
    const other = await http
      .post('/api/subscriptions')
      .set(a.auth)
      .set(idem())
      .send({ url: receiver.url, includeAll: true });
    expect(other.status).to.equal(201);
    const logs = await http.get(`/api/subscriptions/${subscriptionA}/executionLogs`).query({ limit: 1 }).set(a.auth);
    const logCursor: string = logs.body.meta.nextCursor;
    expect(logCursor, 'a page of one log of several has a next cursor').to.be.a('string');
    const more = await http
      .get(`/api/subscriptions/${subscriptionA}/executionLogs`)
      .query({ limit: 1, cursor: logCursor })
      .set(a.auth);
    expect(more.status, JSON.stringify(more.body)).to.equal(200);
    expectInvalidCursor(
      await http.get(`/api/subscriptions/${other.body.id}/executionLogs`).query({ cursor: logCursor }).set(a.auth),
      "one subscription's log cursor on another's logs",
    );
  });

  it('odd query strings are 400s, never 500s', async () => {
    const { http } = await stack();
    const queries = [
      'limit=10&limit=20',
      'filters=a&filters=b',
      'cursor=a&cursor=b',
      'limit[]=1',
      'limit[x]=1',
      'filters[x]=1',
      'limit=1e400',
      'limit=99999999999999999999999',
      'limit=%00',
      'cursor=%00',
      'filters=%00',
      'filters=createdAt%5Bgt%5D%3D%00',
      'filters=owner.legalName%5Beq%5D%3D%F0%9F%98%80',
      'filters=owner.legalName%5Beq%5D%3D%ED%A0%80',
      'sortOrder=%E2%80%AE',
      `filters=${'or('.repeat(200)}`,
      'direction=NEXT&direction=PREVIOUS',
      '__proto__[x]=1',
      'constructor[prototype][x]=1',
    ];
    for (const list of ['/api/accounts', '/api/operations', '/api/beneficiaries', '/api/events', '/api/statements']) {
      for (const q of queries) {
        const res = await http.get(`${list}?${q}`).set(b.auth);
        expect(res.status, `${list}?${q}: ${res.status} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 400]);
        if (res.status === 400) expect(res.body.code, `${list}?${q}`).to.be.a('string');
      }
    }
    for (const q of [
      ...queries,
      'periodStart=2020-01-01T00:00:00Z&periodStart=2021-01-01T00:00:00Z&periodEnd=2030-01-01T00:00:00Z',
    ]) {
      const res = await http.get(`/api/reports?${q}`).set(b.auth);
      expect(res.status, `reports?${q}: ${res.status} ${JSON.stringify(res.body)}`).to.be.oneOf([200, 400]);
    }
    for (const q of ['limit=1&limit=2', 'cursor=%00', 'limit[]=1']) {
      const res = await http.get(`/api/subscriptions/${subscriptionA}/executionLogs?${q}`).set(a.auth);
      expect(res.status, `logs?${q}: ${res.status} ${JSON.stringify(res.body)}`).to.equal(400);
    }
  });

  it("one customer's idempotency key never answers with another's stored answer", async () => {
    const { http } = await stack();
    const key = randomUUID();
    const body = beneficiaryBody();
    const first = await http.post('/api/beneficiaries').set(a.auth).set('X-Idempotency-Key', key).send(body);
    expect(first.status).to.equal(201);
    const second = await http.post('/api/beneficiaries').set(b.auth).set('X-Idempotency-Key', key).send(body);
    expect(second.status).to.equal(201);
    expect(second.headers['idempotent-replayed']).to.equal(undefined);
    expect(second.body.id).not.to.equal(first.body.id);
    expect(second.body.customerId).to.equal(b.customerId);
    const quoteKey = randomUUID();
    const qa = await http
      .post('/api/quotes')
      .set(a.auth)
      .set('X-Idempotency-Key', quoteKey)
      .send({ accountId: accountA, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '1.00' });
    expect(qa.status).to.equal(201);
    const qb = await http
      .post('/api/quotes')
      .set(b.auth)
      .set('X-Idempotency-Key', quoteKey)
      .send({ accountId: accountA, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '1.00' });
    expectNotFound(qb, 'quote with A key and A account');
  });
});
