// Hostile input in every field of every route of /openapi.json (issue 7): the service must answer each with a
// 2xx or a 4xx in the documented error shape, never a 5xx. Routes are read from the running app's document,
// so a route added later is fuzzed without touching this file; fixed seed and bounded runs keep it repeatable
// and well under a minute.
import { createServer, Server } from 'node:http';
import { expect } from 'chai';
import fc from 'fast-check';
import pino from 'pino';
import supertest, { Response } from 'supertest';
import {
  asText,
  bodyPointers,
  expectDocumentedAnswer,
  hostile,
  Location,
  percentEncode,
  sendableHeader,
  withValueAt,
} from '../helpers/hostile';
import { answerClientErrors } from '../../api/client-error';
import { eventually, idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { routeSamples, samplePath } from '../helpers/route-samples';
import { OpenApiDocument, OpenApiOperation, operationsOf, sampleOf } from '../helpers/openapi';

// FUZZ_SEED and FUZZ_RUNS explore further by hand (`FUZZ_RUNS=500 npm test -- test/integration/fuzz.test.ts`).
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 40);

describe('fuzzing every route of /openapi.json with hostile input', function () {
  this.timeout(180_000);
  let customer: TestCustomer;
  let doc: OpenApiDocument;
  let ids: Record<string, string>;
  let baselines: Record<string, () => Promise<unknown>>;
  let server: Server;
  // The app behind a real HTTP server with the API's clientError handler, as api/main.ts runs it: a hostile
  // header of 70 kB must be answered in the error shape too.
  let http: ReturnType<typeof supertest>;

  before(async () => {
    const { app } = await stack();
    // Koa's handler answers its own errors; the promise it returns is not for the server to await.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    server = createServer(app.callback());
    answerClientErrors(server, pino({ level: 'silent' }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    http = supertest(server);
    customer = await newCustomer('Fuzz Ltda');
    ({ ids, bodies: baselines } = await routeSamples(http, customer));
    doc = (await http.get('/openapi.json')).body;
  });

  after(async () => {
    // The swaps and transfers the fuzz created run on the shared worker: let them settle before the next file,
    // so its timings are not spent on our backlog. Deposits simply wait for a payment that never comes.
    const unsettled = 'and(currentState.status[in]=REQUESTED|PROCESSING,intent.type[ne]=DEPOSIT)';
    await eventually(
      async () =>
        (await http.get('/api/operations').query({ filters: unsettled, limit: 1 }).set(customer.auth)).body.meta?.total,
      (total) => total === 0,
      60_000,
      250,
    );
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Path parameters a route needs, real where we have them (so requests get past the lookups). */
  const pathFor = (op: OpenApiOperation, hostileParam?: string, value?: unknown): string =>
    samplePath(op, ids, hostileParam ? { name: hostileParam, value: percentEncode(asText(value)) } : undefined);

  async function send(op: OpenApiOperation, loc: Location, value: unknown): Promise<Response> {
    const key = `${op.method.toUpperCase()} ${op.path}`;
    const makeBaseline = baselines[key];
    const schema = op.requestBody?.content['application/json']?.schema;
    const baseline = makeBaseline ? await makeBaseline() : schema ? sampleOf(doc, schema) : undefined;
    const path = pathFor(op, loc.in === 'path' ? loc.name : undefined, value);
    // Required query parameters (a report's period) get a sample; the hostile one replaces its own.
    const params = new Map(
      op.parameters
        .filter((p) => p.in === 'query' && p.required)
        .map((p) => [p.name, asText(sampleOf(doc, p.schema, p.name))]),
    );
    if (loc.in === 'query') params.set(loc.name, asText(value));
    const query =
      params.size > 0
        ? `?${[...params].map(([k, v]) => `${encodeURIComponent(k)}=${percentEncode(v)}`).join('&')}`
        : '';
    let req = http[op.method as 'get' | 'post' | 'patch' | 'put' | 'delete'](`${path}${query}`)
      .set(customer.auth)
      .set(idem());
    if (loc.in === 'header') req = req.set(loc.name, asText(value));
    const body = loc.in === 'body' ? withValueAt(baseline, loc.pointer, value) : baseline;
    if (body === undefined) return req;
    // A bare JSON value (a number, a string, null) as the whole body is sent as JSON text like any other.
    return body !== null && typeof body === 'object'
      ? req.send(body)
      : req.set('Content-Type', 'application/json').send(JSON.stringify(body));
  }

  function locationsOf(op: OpenApiOperation, baseline: unknown): Location[] {
    const locations: Location[] = op.parameters
      .filter((p) => p.in !== 'header' || p.name.toLowerCase() !== 'authorization')
      .map((p) => ({ in: p.in, name: p.name }));
    if (op.requestBody) locations.push(...bodyPointers(baseline).map((pointer) => ({ in: 'body' as const, pointer })));
    return locations;
  }

  it(
    'refuses NUL, lone surrogates and huge amounts in every field of ' + 'every route in the documented shape',
    async () => {
      // The values the outside fuzzer turned into 500s, swept over every location so none is left to chance.
      const failures: string[] = [];
      for (const op of operationsOf(doc)) {
        const key = `${op.method.toUpperCase()} ${op.path}`;
        const schema = op.requestBody?.content['application/json']?.schema;
        const baseline = baselines[key] ? await baselines[key]() : schema ? sampleOf(doc, schema) : undefined;
        for (const loc of locationsOf(op, baseline)) {
          if (loc.in === 'header') continue;
          const current =
            loc.in === 'body'
              ? loc.pointer.reduce<unknown>((n, k) => (n as Record<string, unknown>)?.[k], baseline)
              : undefined;
          const values = ['a\u0000b', 'x\ud800', '\udc00'];
          const leaf = loc.in === 'body' ? loc.pointer.slice(-2).join('.') : '';
          const isAmount = /amount$|amount\.value$/i.test(leaf);
          if (isAmount && typeof current === 'string') values.push(`${'9'.repeat(33)}.00`, '1000000000000000');
          // Numbers a query's coercion turns into infinity, which passed Ajv's integer bounds.
          if (loc.in === 'query') values.push('Infinity', '-Infinity', '1e400');
          for (const value of values) {
            const res = await send(op, loc, value);
            const where = loc.in === 'body' ? `body /${loc.pointer.join('/')}` : `${loc.in} ${loc.name}`;
            try {
              expectDocumentedAnswer(res, `${key} with ${where} = ${JSON.stringify(value)}`);
              // A query string cannot carry a lone surrogate (its UTF-8 decoding replaces it with U+FFFD), so there
              // the list's own checks may answer first (INVALID_CURSOR, INVALID_FILTER).
              const code = /^[\d.]+$/.test(value)
                ? 'INVALID_AMOUNT'
                : loc.in === 'query'
                  ? res.body.code
                  : 'VALIDATION_ERROR';
              expect([res.status, res.body.code], `${key} with ${where} = ${JSON.stringify(value)}`).to.deep.equal([
                400,
                code,
              ]);
            } catch (err) {
              failures.push((err as Error).message);
            }
          }
        }
      }
      expect(failures, failures.join('\n')).to.deep.equal([]);
    },
  );

  it('answers every hostile value in every field with a 2xx or a documented 4xx, never a 5xx', async () => {
    const failures: string[] = [];
    const ops = operationsOf(doc);
    expect(ops.length).to.be.greaterThan(20);
    for (const op of ops) {
      const key = `${op.method.toUpperCase()} ${op.path}`;
      const schema = op.requestBody?.content['application/json']?.schema;
      const baseline = baselines[key] ? await baselines[key]() : schema ? sampleOf(doc, schema) : undefined;
      const locations = locationsOf(op, baseline);
      if (locations.length === 0) continue;
      try {
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...locations), hostile, async (loc, value) => {
            if (loc.in === 'header' && !sendableHeader(asText(value))) return;
            const res = await send(op, loc, value);
            const where = loc.in === 'body' ? `body /${loc.pointer.join('/')}` : `${loc.in} ${loc.name}`;
            expectDocumentedAnswer(res, `${key} with ${where} = ${asText(value).slice(0, 80)}`);
          }),
          { seed: SEED, numRuns: RUNS_PER_ROUTE, endOnFailure: true },
        );
      } catch (err) {
        const cause = (err as Error & { cause?: Error }).cause;
        const firstLines = (err as Error).message.split('\n').slice(0, 3).join(' ').slice(0, 600);
        failures.push(`${key}: ${firstLines}\n  ${cause?.message.slice(0, 600) ?? ''}`);
      }
    }
    expect(failures, failures.join('\n\n')).to.deep.equal([]);
  });

  it('answers malformed, mistyped, oversized and deeply nested bodies in the documented shape', async () => {
    const mutating = operationsOf(doc).filter((op) => op.requestBody);
    type Raw = { what: string; type: string; body: string | Buffer; status: number };
    const light: Raw[] = [
      { what: 'malformed JSON', type: 'application/json', body: '{"a":', status: 400 },
      { what: 'JSON with a lone surrogate escape', type: 'application/json', body: '{"x":"\\ud800"}', status: 400 },
      { what: 'JSON with a NUL escape', type: 'application/json', body: '{"x":"\\u0000"}', status: 400 },
      { what: 'a text body', type: 'text/plain', body: 'hello', status: 415 },
    ];
    // The heavy ones go to one route: they exercise middleware every route shares.
    const heavy: Raw[] = [
      {
        what: 'nesting 100,000 levels deep',
        type: 'application/json',
        body: `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
        status: 400,
      },
      {
        what: 'a body over 8 MiB',
        type: 'application/json',
        body: Buffer.alloc(8 * 1024 * 1024 + 1, 0x20),
        status: 413,
      },
    ];
    for (const op of mutating) {
      const cases = op.path === '/api/quotes' ? [...light, ...heavy] : light;
      for (const r of cases) {
        const res = await http[op.method as 'post'](pathFor(op))
          .set(customer.auth)
          .set(idem())
          .set('Content-Type', r.type)
          .send(r.body);
        expectDocumentedAnswer(res, `${op.method.toUpperCase()} ${op.path} with ${r.what}`);
        // The token route is public: its schema answers what auth would have answered elsewhere.
        expect(res.status, `${op.path} with ${r.what}: ${JSON.stringify(res.body)}`).to.equal(r.status);
      }
    }
  });
});
