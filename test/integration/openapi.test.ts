// /openapi.json declares, for every route, the schema of its success body, its error responses in the one
// error shape and the headers the service sets; and real responses of key routes validate against it.
import { expect } from 'chai';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { accountBody, activeAccount } from '../helpers/fixtures';
import { beneficiaryBody } from '../helpers/beneficiary-fixtures';
import { fund, quote } from '../helpers/money';
import { deref, OpenApiDocument, operationsOf } from '../helpers/openapi';

const ERROR_REF = '#/components/schemas/Error';

describe('/openapi.json', () => {
  let doc: OpenApiDocument;
  let ajv: Ajv2020;

  before(async () => {
    const { http } = await stack();
    doc = (await http.get('/openapi.json')).body;
    // The whole document as one schema resource, so `#/components/...` refs resolve as in any OpenAPI tool.
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addFormat('amount', true);
    ajv.addSchema(doc, 'openapi.json');
  });

  /** Validates `res` against the document's declaration for this route and status. */
  function expectConforms(
    method: string,
    path: string,
    res: { status: number; body: unknown; headers: Record<string, string> },
  ) {
    const op = doc.paths[path]?.[method];
    expect(op, `${method} ${path} is documented`).to.not.equal(undefined);
    const declared = op.responses[String(res.status)];
    expect(
      declared,
      `${method} ${path} declares status ${res.status} (${JSON.stringify(res.body).slice(0, 200)})`,
    ).to.not.equal(undefined);
    for (const name of Object.keys(declared.headers ?? {})) {
      if (name === 'Idempotent-Replayed' || name === 'Retry-After') continue; // only on replays / 429s
      expect(res.headers[name.toLowerCase()], `${method} ${path} ${res.status}: header ${name}`).to.be.a('string');
    }
    // An error's code is one the document names for that status: a client switches on it.
    const code = (res.body as { code?: unknown } | null)?.code;
    if (res.status >= 400 && typeof code === 'string')
      expect(declared.description, `${method} ${path} ${res.status}: names ${code}`).to.include(`\`${code}\``);
    const pathToken = path.replace(/~/g, '~0').replace(/\//g, '~1');
    const pointer =
      `openapi.json#/paths/${pathToken}/${method}/responses/${res.status}` + '/content/application~1json/schema';
    const validate = ajv.getSchema(pointer);
    expect(validate, `schema at ${pointer}`).to.not.equal(undefined);
    // A vacuous schema would accept anything; every declared body has required fields.
    expect(validate!({}), `${method} ${path} ${res.status}: schema accepts {}`).to.equal(false);
    const ok = validate!(res.body);
    expect(
      ok,
      `${method} ${path} ${res.status}: ${ajv.errorsText(validate!.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`,
    ).to.equal(true);
  }

  it('declares a success body schema, the error responses and the headers of every route', () => {
    const ops = operationsOf(doc);
    expect(ops.length).to.be.greaterThan(20);
    for (const op of ops) {
      const what = `${op.method.toUpperCase()} ${op.path}`;
      const statuses = Object.keys(op.responses);
      const success = statuses.filter((s) => /^2/.test(s));
      expect(success, `${what}: one success status`).to.have.length(1);
      const ok = deref(doc, op.responses[success[0]]);
      if (success[0] !== '204')
        expect(ok.content?.['application/json']?.schema, `${what}: success schema`).to.be.an('object');
      expect(ok.headers, `${what}: success headers`).to.include.keys('X-Request-Id', 'X-Service-Version');
      const mutating = !['get', 'delete'].includes(op.method);
      const secured = !Array.isArray(op.security) || op.security.length > 0;
      if (mutating && secured)
        expect(ok.headers, `${what}: Idempotent-Replayed`).to.include.keys('Idempotent-Replayed');
      const expected = [
        '400',
        '429',
        '500',
        ...(secured ? ['401'] : []),
        ...(mutating && secured ? ['409', '422'] : []),
        ...(op.path.includes('{') ? ['404'] : []),
      ];
      expect(statuses, `${what}: error statuses`).to.include.members(expected);
      for (const status of statuses.filter((s) => !/^2/.test(s))) {
        const declared = deref(doc, op.responses[status]);
        expect(declared.content?.['application/json']?.schema, `${what} ${status}: Error schema`).to.deep.equal({
          $ref: ERROR_REF,
        });
        expect(declared.headers, `${what} ${status}: headers`).to.include.keys('X-Request-Id');
        if (status === '429') expect(declared.headers, `${what} 429: Retry-After`).to.include.keys('Retry-After');
      }
      const idempotencyKey = op.parameters.find((p) => p.in === 'header' && p.name === 'X-Idempotency-Key');
      if (mutating && secured) expect(idempotencyKey?.required, `${what}: X-Idempotency-Key`).to.equal(true);
    }
  });

  it('gives every operation a unique operationId', () => {
    const ids = operationsOf(doc).map((op) => (op as unknown as { operationId: string }).operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).to.equal(true);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('resolves every $ref of the document', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      const target = JSON.parse(`{${ref}}`).$ref as string;
      expect(deref(doc, { $ref: target }), target)
        .to.be.an('object')
        .and.not.have.property('$ref');
    }
  });

  describe('real responses validate against their declared schemas', () => {
    let customer: TestCustomer;

    before(async () => {
      customer = await newCustomer('Schema Ltda');
    });

    it('token, accounts, balances and lists', async () => {
      const { http } = await stack();
      const token = await http
        .post('/api/oauth/client/token')
        .send({ clientId: customer.clientId, clientSecret: customer.clientSecret });
      expectConforms('post', '/api/oauth/client/token', token);
      const created = await http.post('/api/accounts').set(customer.auth).set(idem()).send(accountBody());
      expectConforms('post', '/api/accounts', created);
      const ubo = await http
        .post(`/api/accounts/${created.body.id}/ubos`)
        .set(customer.auth)
        .set(idem())
        .send({ name: 'Ana Lima', taxId: { value: '52998224725', type: 'CPF' }, address: created.body.owner.address });
      expectConforms('post', '/api/accounts/{accountId}/ubos', ubo);
      expectConforms(
        'get',
        '/api/accounts/{accountId}',
        await http.get(`/api/accounts/${created.body.id}`).set(customer.auth),
      );
      expectConforms('get', '/api/accounts', await http.get('/api/accounts').set(customer.auth));
      expectConforms(
        'get',
        '/api/accounts/{accountId}/balances',
        await http.get(`/api/accounts/${created.body.id}/balances`).set(customer.auth),
      );
    });

    it('quotes and operations', async () => {
      const { http } = await stack();
      const source = await activeAccount(customer, ['BRL', 'USD']);
      const target = await activeAccount(customer, ['BRL', 'USD']);
      await fund(customer, source.id, 'BRL', '100.00');
      const q = await http
        .post('/api/quotes')
        .set(customer.auth)
        .set(idem())
        .send({ accountId: source.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '10.00' });
      expectConforms('post', '/api/quotes', q);
      expectConforms('get', '/api/rates', await http.get('/api/rates?base=BRL').set(customer.auth));
      const swap = await http
        .post('/api/operations/swap')
        .set(customer.auth)
        .set(idem())
        .send({ accountId: source.id, quoteId: q.body.id });
      expectConforms('post', '/api/operations/swap', swap);
      const transfer = await http
        .post('/api/operations/transfer')
        .set(customer.auth)
        .set(idem())
        .send({ sourceAccountId: source.id, targetAccountId: target.id, amount: { value: '1.00', asset: 'BRL' } });
      expectConforms('post', '/api/operations/transfer', transfer);
      const depositQuote = await quote(customer, {
        accountId: source.id,
        sourceAsset: 'BRL',
        targetAsset: 'BRL',
        sourceAmount: '5.00',
      });
      const deposit = await http
        .post('/api/operations/deposit')
        .set(customer.auth)
        .set(idem())
        .send({ accountId: source.id, quoteId: depositQuote.id, fundingInstruction: { rail: 'BOLETO' } });
      expectConforms('post', '/api/operations/deposit', deposit);
      expectConforms(
        'get',
        '/api/operations/{operationId}',
        await http.get(`/api/operations/${swap.body.id}`).set(customer.auth),
      );
      expectConforms('get', '/api/operations', await http.get('/api/operations').set(customer.auth));
    });

    it('beneficiaries', async () => {
      const { http } = await stack();
      const created = await http.post('/api/beneficiaries').set(customer.auth).set(idem()).send(beneficiaryBody());
      expectConforms('post', '/api/beneficiaries', created);
      expectConforms(
        'get',
        '/api/beneficiaries/{beneficiaryId}',
        await http.get(`/api/beneficiaries/${created.body.id}`).set(customer.auth),
      );
      expectConforms('get', '/api/beneficiaries', await http.get('/api/beneficiaries').set(customer.auth));
    });

    it('inbound payments', async () => {
      const { http } = await stack();
      const account = await activeAccount(customer, ['BRL']);
      const q = await quote(customer, {
        accountId: account.id,
        sourceAsset: 'BRL',
        targetAsset: 'BRL',
        sourceAmount: '5.00',
      });
      const body = { accountId: account.id, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } };
      const deposit = await http.post('/api/operations/deposit').set(customer.auth).set(idem()).send(body);
      const payment = { amount: { value: '7.00', asset: 'BRL' } };
      const path = `/api/sandbox/operations/${deposit.body.id}/inbound-payment`;
      const paid = await http.post(path).set(customer.auth).set(idem()).send(payment);
      expectConforms('post', '/api/sandbox/operations/{operationId}/inbound-payment', paid);
      const one = await http.get(`/api/inbound-payments/${paid.body.id}`).set(customer.auth);
      expectConforms('get', '/api/inbound-payments/{paymentId}', one);
      expectConforms('get', '/api/inbound-payments', await http.get('/api/inbound-payments').set(customer.auth));
    });

    it('errors: 400, 401, 404, 409 and 422 bodies match the Error schema', async () => {
      const { http } = await stack();
      const account = await http.post('/api/accounts').set(customer.auth).set(idem()).send(accountBody());
      expectConforms(
        'post',
        '/api/quotes',
        await http
          .post('/api/quotes')
          .set(customer.auth)
          .set(idem())
          .send({ accountId: account.body.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '1'.repeat(20) }),
      );
      expectConforms('get', '/api/accounts', await http.get('/api/accounts'));
      expectConforms(
        'get',
        '/api/accounts/{accountId}',
        await http.get('/api/accounts/00000000-0000-4000-8000-000000000000').set(customer.auth),
      );
      const key = idem();
      const first = await http.post('/api/accounts').set(customer.auth).set(key).send(accountBody());
      expect(first.status).to.equal(201);
      const reused = await http.post('/api/accounts').set(customer.auth).set(key).send(accountBody());
      expectConforms('post', '/api/accounts', reused);
      expect(reused.status).to.equal(422);
      const review = await http.post(`/api/accounts/${account.body.id}/review`).set(customer.auth).set(idem());
      expectConforms('post', '/api/accounts/{accountId}/review', review);
    });

    it('errors of reports and subscriptions carry codes the document names', async () => {
      const { http } = await stack();
      const reversed = await http
        .get('/api/reports?periodStart=2026-02-01T00:00:00Z&periodEnd=2026-01-01T00:00:00Z')
        .set(customer.auth);
      expect(reversed.body.code).to.equal('INVALID_PERIOD');
      expectConforms('get', '/api/reports', reversed);
      const badFilter = await http
        .get(`/api/reports?periodStart=2026-01-01T00:00:00Z&periodEnd=2026-02-01T00:00:00Z&filters=asset[ne]=BRL`)
        .set(customer.auth);
      expect(badFilter.body.code).to.equal('INVALID_FILTER');
      expectConforms('get', '/api/reports', badFilter);
      const badUrl = { url: 'ftp://hooks.example.com/', includeAll: true };
      const created = await http.post('/api/subscriptions').set(customer.auth).set(idem()).send(badUrl);
      expect(created.body.code).to.equal('INVALID_WEBHOOK_URL');
      expectConforms('post', '/api/subscriptions', created);
      const sub = await http
        .post('/api/subscriptions')
        .set(customer.auth)
        .set(idem())
        .send({ url: 'http://127.0.0.1:9/', includeAll: true });
      expect(sub.status).to.equal(201);
      const patched = await http
        .patch(`/api/subscriptions/${sub.body.id}`)
        .set(customer.auth)
        .set(idem())
        .send({ url: 'ftp://hooks.example.com/' });
      expect(patched.body.code).to.equal('INVALID_WEBHOOK_URL');
      expectConforms('patch', '/api/subscriptions/{subscriptionId}', patched);
    });
  });
});
