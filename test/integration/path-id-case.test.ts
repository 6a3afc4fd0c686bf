// An id in a path written in upper case names what the lower-case id names: the same row, the same workflow (its
// signals), the same lock and the same idempotency key's request. Every route of /openapi.json that holds a path
// id is driven here with the upper-case form of a real id; a route added later fails the coverage check below.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { activeAccount, createAccount, documentBody, uboBody, uploadAllDocuments } from '../helpers/fixtures';
import { approvedInstruction, beneficiaryBody, pixInstruction } from '../helpers/beneficiary-fixtures';
import { fund, quote, untilStatus } from '../helpers/money';
import { OpenApiDocument, operationsOf } from '../helpers/openapi';
import { issueStatements } from '../../statements/issue';
import { createCustomer } from '../../services/auth';

const upper = (path: string) => path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, (id) => id.toUpperCase());

describe('ids in paths written in upper case', function () {
  this.timeout(180_000);
  let c: TestCustomer;
  let http: Awaited<ReturnType<typeof stack>>['http'];
  const driven = new Set<string>();

  before(async () => {
    ({ http } = await stack());
    c = await newCustomer('Upper Case Ltda');
  });

  /** The route as OpenAPI names it, from its method and a concrete lower-case path. */
  const routeOf = (method: string, path: string) =>
    `${method.toUpperCase()} ${path.replace(/\?.*$/, '').replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '{id}')}`;

  /** A read: the upper-case path answers exactly what the lower-case path answers. */
  async function read(path: string): Promise<Response> {
    driven.add(routeOf('get', path));
    const lower = await http.get(path).set(c.auth);
    const res = await http.get(upper(path)).set(c.auth);
    expect(res.status, `GET ${upper(path)}: ${JSON.stringify(res.body)}`).to.equal(lower.status);
    expect(res.body, `GET ${upper(path)}`).to.deep.equal(lower.body);
    expect(lower.status, `GET ${path}: ${JSON.stringify(lower.body)}`).to.equal(200);
    return res;
  }

  /**
   * A write: sent with the upper-case path, it answers `status`; the same key with the lower-case path is the same
   * request (a replay of that answer), not a new one.
   */
  async function write(method: 'post' | 'patch' | 'delete', path: string, body: object | undefined, status: number) {
    driven.add(routeOf(method, path));
    const key = idem();
    const send = (p: string) => {
      const req = http[method](p).set(c.auth).set(key);
      return body === undefined ? req : req.send(body);
    };
    const res = await send(upper(path));
    expect(res.status, `${method.toUpperCase()} ${upper(path)}: ${JSON.stringify(res.body)}`).to.equal(status);
    if (method === 'delete') return res;
    const again = await send(path);
    expect([again.status, again.headers['idempotent-replayed']], `${method} ${path} replays`).to.deep.equal([
      status,
      'true',
    ]);
    expect(again.body).to.deep.equal(res.body);
    return res;
  }

  it('reads, writes and signals through every route that holds an id', async () => {
    // An account taken from ACTION_REQUIRED to ACTIVE entirely through upper-case paths.
    const pending = await createAccount(c);
    const ubo = (await write('post', `/api/accounts/${pending.id}/ubos`, uboBody(), 201)).body;
    await write('patch', `/api/accounts/${pending.id}/ubos/${ubo.id}`, { name: 'Maria Souza' }, 200);
    await write('post', `/api/accounts/${pending.id}/documents`, documentBody('CERTIFICATE_OF_INCORPORATION'), 201);
    await uploadAllDocuments(c, pending.id.toUpperCase());
    await write('post', `/api/accounts/${pending.id}/review`, undefined, 202);
    const approved = await write('post', `/api/sandbox/accounts/${pending.id}/review`, { decision: 'APPROVE' }, 200);
    expect(approved.body.id).to.equal(pending.id);
    await eventually(
      async () => (await read(`/api/accounts/${pending.id}`)).body.currentState.status,
      (s) => s === 'ACTIVE',
    );
    await read(`/api/accounts/${pending.id}/balances`);

    // A payment instruction added and approved (a signal to its review workflow).
    const beneficiary = (await http.post('/api/beneficiaries').set(c.auth).set(idem()).send(beneficiaryBody())).body;
    const added = await write(
      'post',
      `/api/beneficiaries/${beneficiary.id}/payment-instructions`,
      pixInstruction('EMAIL', `${randomUUID()}@example.com`),
      201,
    );
    const instruction = added.body.paymentInstructions.find(
      (p: { id: string }) => p.id !== beneficiary.paymentInstructions[0].id,
    );
    const reviewed = await write(
      'post',
      `/api/sandbox/payment-instructions/${instruction.id}/review`,
      { decision: 'APPROVE' },
      200,
    );
    const decidedInstruction = reviewed.body.paymentInstructions.find((p: { id: string }) => p.id === instruction.id);
    expect(decidedInstruction.currentState.status).to.equal('APPROVED');
    await read(`/api/beneficiaries/${beneficiary.id}`);

    // A deposit paid in (a signal to the deposit's workflow), and its inbound payment.
    const account = await activeAccount(c, ['BRL', 'USD']);
    const q = await quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '5.00' });
    const deposit = await http
      .post('/api/operations/deposit')
      .set(c.auth)
      .set(idem())
      .send({ accountId: account.id, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } });
    const paid = await write(
      'post',
      `/api/sandbox/operations/${deposit.body.id}/inbound-payment`,
      { amount: { value: '5.00', asset: 'BRL' } },
      200,
    );
    await untilStatus(c, deposit.body.id, 'COMPLETED');
    await read(`/api/operations/${deposit.body.id}`);
    await read(`/api/inbound-payments/${paid.body.id}`);

    // The account's statement on demand, and one issued for the second just closed.
    const [periodStart, periodEnd] = [new Date(Date.now() - 3_600_000).toISOString(), new Date().toISOString()];
    await read(`/api/accounts/${account.id}/statement?asset=BRL&periodStart=${periodStart}&periodEnd=${periodEnd}`);
    const { services, config } = await stack();
    const issuing = { statementInterval: 'PT1S', webhookTaskQueue: config.webhookTaskQueue };
    // Issuing covers accounts opened before the period's end: let the account's own second close first (the
    // deposit above can complete within it).
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const issuedNow = await issueStatements({ orm: services.orm, config: issuing }, new Date());
    const issued = await http.get('/api/statements').set(c.auth);
    expect(issued.body.data, JSON.stringify({ issuedNow, list: issued.body })).to.have.length.greaterThan(0);
    await read(`/api/statements/${issued.body.data[0].id}`);

    // A withdrawal held for review, approved (a signal to the withdrawal's workflow).
    await fund(c, account.id, 'USD', '12000.00');
    const { beneficiaryId, instructionId } = await approvedInstruction(c, {
      dictKeyType: 'PHONE',
      dictKey: '+5511987654321',
    });
    const wq = await quote(c, {
      accountId: account.id,
      sourceAsset: 'USD',
      targetAsset: 'BRL',
      sourceAmount: '11000.00',
    });
    const withdrawal = await http
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(idem())
      .send({
        accountId: account.id,
        quoteId: wq.id,
        beneficiary: {
          type: 'REFERENCE',
          id: beneficiaryId,
          paymentInstruction: { type: 'REFERENCE', id: instructionId },
        },
      });
    expect(withdrawal.status, JSON.stringify(withdrawal.body)).to.equal(201);
    await untilStatus(c, withdrawal.body.id, 'ON_HOLD');
    const decided = await write(
      'post',
      `/api/sandbox/operations/${withdrawal.body.id}/hold-review`,
      { decision: 'APPROVE' },
      200,
    );
    expect(decided.body.currentState.status).to.equal('COMPLETED');

    // A subscription whose deliveries fail (nothing listens on the discard port), with its logs and events.
    const sub = (
      await http
        .post('/api/subscriptions')
        .set(c.auth)
        .set(idem())
        .send({ url: 'https://127.0.0.1:9/hook', includeAll: true })
    ).body;
    await http.post('/api/beneficiaries').set(c.auth).set(idem()).send(beneficiaryBody());
    const logs = await eventually(
      async () => (await http.get(`/api/subscriptions/${sub.id}/executionLogs`).set(c.auth)).body.data ?? [],
      (data) => data.length > 0,
    );
    await read(`/api/subscriptions/${sub.id}`);
    await read(`/api/subscriptions/${sub.id}/executionLogs`);
    await read(`/api/subscriptions/${sub.id}/executionLogs/${logs[0].id}`);
    await read(`/api/subscriptions/${sub.id}/executionLogs/${logs[0].id}/attempts`);
    const event = (await http.get('/api/events').set(c.auth)).body.data[0];
    await read(`/api/events/${event.id}`);
    await write('patch', `/api/subscriptions/${sub.id}`, { allowRetry: true }, 200);
    await write('post', `/api/subscriptions/${sub.id}/rotate-secret`, undefined, 200);
    const redeliver = `/api/subscriptions/${sub.id}/executionLogs/${logs[0].id}/redeliver`;
    await write('post', redeliver, undefined, 202);
    const since = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await write('post', `/api/subscriptions/${sub.id}/recover`, { since }, 202);
    await write('delete', `/api/subscriptions/${sub.id}`, undefined, 204);
    expect((await http.get(`/api/subscriptions/${sub.id}`).set(c.auth)).status).to.equal(404);
  });

  it('left no route that holds an id undriven', async () => {
    const doc = (await http.get('/openapi.json')).body as OpenApiDocument;
    const withIds = operationsOf(doc)
      .filter((op) => op.path.includes('{'))
      .map((op) => `${op.method.toUpperCase()} ${op.path.replace(/\{[A-Za-z]+\}/g, '{id}')}`);
    expect([...driven].sort()).to.deep.equal([...new Set(withIds)].sort());
  });

  it("takes upper-case ids in a body as the same ids: a transfer between the caller's accounts, a quote", async () => {
    const from = await activeAccount(c, ['BRL', 'USD']);
    const to = await activeAccount(c, ['BRL', 'USD']);
    await fund(c, from.id, 'BRL', '10.00');
    const transfer = await http
      .post('/api/operations/transfer')
      .set(c.auth)
      .set(idem())
      .send({
        sourceAccountId: from.id.toUpperCase(),
        targetAccountId: to.id.toUpperCase(),
        amount: { value: '1.00', asset: 'BRL' },
      });
    expect(transfer.status, JSON.stringify(transfer.body)).to.equal(201);
    await untilStatus(c, transfer.body.id, 'COMPLETED');
    const q = await http
      .post('/api/quotes')
      .set(c.auth)
      .set(idem())
      .send({ accountId: from.id.toUpperCase(), sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '5.00' });
    expect(q.status, JSON.stringify(q.body)).to.equal(201);
    expect(JSON.stringify(q.body)).to.include(from.id).and.not.include(from.id.toUpperCase());
  });

  it("takes a withdrawal's beneficiary ids in upper case as the same request: its key replays", async () => {
    const account = await activeAccount(c, ['BRL']);
    await fund(c, account.id, 'BRL', '50.00');
    const { beneficiaryId, instructionId } = await approvedInstruction(c, {
      dictKeyType: 'PHONE',
      dictKey: '+5511912345678',
    });
    const q = await quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '5.00' });
    const body = (ids: (id: string) => string) => ({
      accountId: account.id,
      quoteId: q.id,
      beneficiary: {
        type: 'REFERENCE',
        id: ids(beneficiaryId),
        paymentInstruction: { type: 'REFERENCE', id: ids(instructionId) },
      },
    });
    const key = idem();
    const first = await http
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(key)
      .send(body((id) => id.toUpperCase()));
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    // A retry whose ids are written in lower case is the same request (decision 0170): the first answer again.
    const again = await http
      .post('/api/operations/withdrawal')
      .set(c.auth)
      .set(key)
      .send(body((id) => id));
    expect(
      [again.status, again.headers['idempotent-replayed'], again.body.id],
      JSON.stringify(again.body),
    ).to.deep.equal([201, 'true', first.body.id]);
  });

  it('takes a percent-encoded upper-case id as the same id', async () => {
    const account = await createAccount(c);
    const encoded = account.id.toUpperCase().replace(/[A-F]/g, (ch) => `%${ch.charCodeAt(0).toString(16)}`);
    const res = await http.get(`/api/accounts/${encoded}`).set(c.auth);
    expect([res.status, res.body.id]).to.deep.equal([200, account.id]);
  });
});

describe('a path written with a trailing slash', () => {
  it("is the same request: its key replays, its limits are the route's, a token needs no bearer", async () => {
    const { http } = await stack();
    const c = await newCustomer('Trailing Slash Ltda');
    const account = await activeAccount(c, ['BRL', 'USD']);
    const key = idem();
    const body = { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '5.00' };
    const first = await http.post('/api/quotes').set(c.auth).set(key).send(body);
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    // A retry sent to the other spelling of the same route: the first answer again, not 422 IDEMPOTENCY_KEY_REUSED.
    const again = await http.post('/api/quotes/').set(c.auth).set(key).send(body);
    expect(
      [again.status, again.headers['idempotent-replayed'], again.body.id],
      JSON.stringify(again.body),
    ).to.deep.equal([201, 'true', first.body.id]);

    // A document over the 1 MiB of other bodies: the documents route's limit, whichever spelling.
    const pending = await createAccount(c);
    const twoMiB = Buffer.alloc(2 * 1024 * 1024, 7).toString('base64');
    const upload = await http
      .post(`/api/accounts/${pending.id}/documents/`)
      .set(c.auth)
      .set(idem())
      .send(documentBody('CERTIFICATE_OF_INCORPORATION', undefined, twoMiB));
    expect([upload.status, upload.body.code], JSON.stringify(upload.body).slice(0, 300)).to.deep.equal([
      201,
      undefined,
    ]);

    // The token route is public under either spelling.
    const { services } = await stack();
    const client = await createCustomer(services.orm, 'Trailing Slash Token Ltda');
    const token = await http
      .post('/api/oauth/client/token/')
      .send({ clientId: client.clientId, clientSecret: client.clientSecret });
    expect([token.status, token.body.tokenType], JSON.stringify(token.body)).to.deep.equal([200, 'Bearer']);
  });
});
