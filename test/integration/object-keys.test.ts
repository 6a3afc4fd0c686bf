// Request values that name Object.prototype's keys (`__proto__`, `constructor`, ...): wherever the service looks a
// request value up, such a name must mean "no such thing", never a member every object inherits. Swept over every
// route of /openapi.json, so a route or a lookup added later is covered without touching this file.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { expectDocumentedAnswer, percentEncode } from '../helpers/hostile';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { accountBody, activeAccount } from '../helpers/fixtures';
import { beneficiaryBody } from '../helpers/beneficiary-fixtures';
import { OpenApiDocument, OpenApiOperation, operationsOf, sampleOf } from '../helpers/openapi';

const OBJECT_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'];
// A version that does not exist: the spec sends it to the default, and so must every name above.
const UNKNOWN_VERSION = '999';
// A report's period, so the report's other parameters are the ones checked.
const PERIOD: Partial<Record<string, string>> = {
  periodStart: '2026-01-01T00:00:00Z',
  periodEnd: '2026-02-01T00:00:00Z',
};

describe('request values that name Object.prototype keys', function () {
  this.timeout(120_000);
  let customer: TestCustomer;
  let doc: OpenApiDocument;
  let ids: Record<string, string>;
  let http: Awaited<ReturnType<typeof stack>>['http'];

  before(async () => {
    ({ http } = await stack());
    customer = await newCustomer('Object Keys Ltda');
    const account = await activeAccount(customer, ['BRL', 'USD']);
    const pending = await http.post('/api/accounts').set(customer.auth).set(idem()).send(accountBody());
    const beneficiary = await http.post('/api/beneficiaries').set(customer.auth).set(idem()).send(beneficiaryBody());
    ids = {
      accountId: account.id,
      pendingAccountId: pending.body.id,
      beneficiaryId: beneficiary.body.id,
      instructionId: beneficiary.body.paymentInstructions[0].id,
    };
    doc = (await http.get('/openapi.json')).body;
  });

  const pathOf = (op: OpenApiOperation, param?: string, value?: string, realIds = true) =>
    op.path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) =>
      name === param ? percentEncode(value!) : ((realIds ? ids[name] : undefined) ?? randomUUID()),
    );

  /** The route called with a sample of what it takes, `change` applied; a fresh idempotency key each time. */
  function call(
    op: OpenApiOperation,
    change: { header?: [string, string]; path?: [string, string]; query?: [string, string]; body?: string } = {},
    realIds = true,
  ): Promise<Response> {
    const params = new Map(
      op.parameters
        .filter((p) => p.in === 'query' && p.required)
        .map((p) => [p.name, PERIOD[p.name] ?? String(sampleOf(doc, p.schema, p.name))]),
    );
    if (change.query) params.set(...change.query);
    const query = [...params].map(([k, v]) => `${encodeURIComponent(k)}=${percentEncode(v)}`).join('&');
    const url = `${pathOf(op, change.path?.[0], change.path?.[1], realIds)}${query ? `?${query}` : ''}`;
    let req = http[op.method as 'get' | 'post' | 'patch' | 'put' | 'delete'](url).set(customer.auth).set(idem());
    if (change.header) req = req.set(...change.header);
    const schema = op.requestBody?.content['application/json']?.schema;
    const body = change.body ?? (schema ? JSON.stringify(sampleOf(doc, schema)) : undefined);
    return body === undefined ? req : req.set('Content-Type', 'application/json').send(body);
  }

  const answer = (res: Response) =>
    res.status >= 400 ? { status: res.status, code: res.body.code, message: res.body.message } : res.status;

  it('serves every route of /openapi.json to an X-Service-Version naming an object key as to an unknown', async () => {
    const failures: string[] = [];
    const ops = operationsOf(doc);
    expect(ops.length).to.be.greaterThan(20);
    for (const op of ops) {
      for (const name of OBJECT_KEYS) {
        // A write to a real resource answers differently the second time (a review already decided): writes name
        // resources that do not exist, so both calls meet the same state.
        const realIds = op.method === 'get';
        const unknown = await call(op, { header: ['X-Service-Version', UNKNOWN_VERSION] }, realIds);
        const res = await call(op, { header: ['X-Service-Version', name] }, realIds);
        const what = `${op.method.toUpperCase()} ${op.path} with X-Service-Version ${name}`;
        try {
          expectDocumentedAnswer(res, what);
          expect(res.headers['x-service-version'], what).to.equal('1');
          expect(String(res.body?.message), what).to.not.match(/^no route/);
          expect(answer(res), what).to.deep.equal(answer(unknown));
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('answers an object key in every path, query and header parameter in the documented shape', async () => {
    const failures: string[] = [];
    for (const op of operationsOf(doc)) {
      const params = op.parameters.filter((p) => p.in !== 'header' || p.name.toLowerCase() !== 'authorization');
      for (const p of params) {
        for (const name of OBJECT_KEYS) {
          const res = await call(op, { [p.in]: [p.name, name] });
          const what = `${op.method.toUpperCase()} ${op.path} with ${p.in} ${p.name} = ${name}`;
          try {
            expectDocumentedAnswer(res, what);
            expect(String(res.body?.message), what).to.not.match(/^no route/);
            // A path id is a UUID, a query value an allowlisted word: an object key is neither.
            if (p.in === 'path') expect([res.status, res.body.code], what).to.deep.equal([400, 'VALIDATION_ERROR']);
          } catch (err) {
            failures.push((err as Error).message);
          }
        }
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('refuses an object key as a query parameter name and as a body property name, in the error shape', async () => {
    const failures: string[] = [];
    for (const op of operationsOf(doc)) {
      const schema = op.requestBody?.content['application/json']?.schema;
      const sample = schema ? JSON.stringify(sampleOf(doc, schema)) : undefined;
      for (const name of OBJECT_KEYS) {
        const what = `${op.method.toUpperCase()} ${op.path} with`;
        const byQuery = await call(op, { query: [name, 'x'] });
        // Written as JSON text: a JS object literal would take `__proto__` as its prototype, not as a property.
        const body = sample?.startsWith('{') ? `{${JSON.stringify(name)}:{"polluted":true},${sample.slice(1)}` : null;
        const byBody = body === null ? undefined : await call(op, { body: body.replace(/,}$/, '}') });
        try {
          expectDocumentedAnswer(byQuery, `${what} query name ${name}`);
          // A route that takes no query string ignores one; a route that takes one allowlists its names.
          if (op.parameters.some((p) => p.in === 'query'))
            expect([byQuery.status, byQuery.body.code], `${what} query name ${name}`).to.deep.equal([
              400,
              'VALIDATION_ERROR',
            ]);
          if (byBody) {
            expectDocumentedAnswer(byBody, `${what} body property ${name}`);
            expect([byBody.status, byBody.body.code], `${what} body property ${name}`).to.deep.equal([
              400,
              'VALIDATION_ERROR',
            ]);
          }
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('takes an object key for no filter field, operator or sort order of any list', async () => {
    const lists = operationsOf(doc).filter(
      (op) => op.method === 'get' && op.parameters.some((p) => p.name === 'filters'),
    );
    expect(lists.length).to.be.greaterThan(3);
    for (const op of lists) {
      for (const name of OBJECT_KEYS) {
        const what = `GET ${op.path}`;
        const byField = await call(op, { query: ['filters', `${name}[eq]=x`] });
        expect([byField.status, byField.body.code], `${what} filter field ${name}`).to.deep.equal([
          400,
          'INVALID_FILTER',
        ]);
        const byOp = await call(op, { query: ['filters', `createdAt[${name}]=x`] });
        expect([byOp.status, byOp.body.code], `${what} filter operator ${name}`).to.deep.equal([400, 'INVALID_FILTER']);
        if (op.parameters.some((p) => p.name === 'sortOrder')) {
          const bySort = await call(op, { query: ['sortOrder', name] });
          expect([bySort.status, bySort.body.code], `${what} sortOrder ${name}`).to.deep.equal([
            400,
            'VALIDATION_ERROR',
          ]);
        }
      }
    }
  });

  it('treats an object key as a client id like any unknown one: 401 INVALID_CLIENT', async () => {
    for (const name of OBJECT_KEYS) {
      const res = await http.post('/api/oauth/client/token').send({ clientId: name, clientSecret: 'x' });
      expect([res.status, res.body.code], name).to.deep.equal([401, 'INVALID_CLIENT']);
    }
  });
});

describe('a method a known path does not declare', () => {
  it('answers 405 METHOD_NOT_ALLOWED with Allow, in the error shape, and a path nobody serves stays 404', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const trace = await http.trace('/api/oauth/client/token');
    expect([trace.status, trace.body.code]).to.deep.equal([405, 'METHOD_NOT_ALLOWED']);
    expect(trace.headers.allow).to.equal('POST');
    expect(trace.body.details).to.deep.equal({ allow: ['POST'] });
    expect(trace.headers['x-service-version']).to.equal('1');
    const put = await http.put('/api/accounts').set(c.auth).set(idem()).send({});
    expect([put.status, put.body.code]).to.deep.equal([405, 'METHOD_NOT_ALLOWED']);
    expect(put.headers.allow).to.equal('GET, HEAD, POST');
    const subscription = await http.post(`/api/subscriptions/${randomUUID()}`).set(c.auth).set(idem()).send({});
    expect(subscription.status).to.equal(405);
    expect(subscription.headers.allow).to.equal('DELETE, GET, HEAD, PATCH');
    // Without a token, a customer's path still says who may come in first.
    expect((await http.put('/api/accounts').send({})).status).to.equal(401);
    expect((await http.delete('/openapi.json')).headers.allow).to.equal('GET, HEAD');
    const nowhere = await http.put('/api/nothing-here').set(c.auth);
    expect([nowhere.status, nowhere.body.code]).to.deep.equal([404, 'NOT_FOUND']);
  });

  it('leaves /openapi.json without the methods it does not serve', async () => {
    const { http } = await stack();
    const doc = (await http.get('/openapi.json')).body as OpenApiDocument;
    const methods = new Set(Object.values(doc.paths).flatMap((m) => Object.keys(m)));
    expect([...methods].sort()).to.deep.equal(['delete', 'get', 'patch', 'post']);
  });
});
