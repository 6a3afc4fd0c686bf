// Hostile requests as bytes on the wire, where fuzz.test.ts puts hostile values into well-formed requests: bodies
// truncated, flipped, re-encoded, given duplicate or prototype keys; ids percent-encoded badly; query parameters
// repeated or mis-encoded; Authorization, X-Idempotency-Key and Content-Type in the forms clients get wrong; methods a
// route does not declare. Whatever arrives, a client must get an answer (no reset, no hang), never a 5xx, an error in
// the documented shape without our internals, and never a byte of another customer's data. Seeded, so a failure
// names a request that fails again (FUZZ_SEED, FUZZ_RUNS explore further by hand).
import { randomUUID } from 'node:crypto';
import http, { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { expect } from 'chai';
import fc from 'fast-check';
import jwt from 'jsonwebtoken';
import pino from 'pino';
import { answerClientErrors } from '../../api/client-error';
import { idem, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { accountBody, activeAccount, uboBody } from '../helpers/fixtures';
import { beneficiaryBody, individualHolder } from '../helpers/beneficiary-fixtures';
import { OpenApiDocument, operationsOf } from '../helpers/openapi';

const SEED = Number(process.env.FUZZ_SEED ?? 20261205);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);

interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

interface WireAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Set when no complete answer came: the socket was reset, or nothing arrived in time. */
  failure?: string;
}

function exchange(port: number, req: WireRequest): Promise<WireAnswer> {
  return new Promise((resolve) => {
    const sent = http.request(
      { host: '127.0.0.1', port, method: req.method, path: req.path, headers: req.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', (err) => resolve({ status: 0, headers: {}, text: '', failure: String(err) }));
      },
    );
    sent.setTimeout(15_000, () => sent.destroy(new Error('no answer within 15 s')));
    sent.on('error', (err) => resolve({ status: 0, headers: {}, text: '', failure: String(err) }));
    sent.end(req.body);
  });
}

// What a path segment that should be an id may be: a real id (ours or another customer's), an unknown one, or text
// a careless client or a hostile one writes there.
const SEGMENTS = [
  '%C0%AF',
  '%FF',
  '%00',
  '%',
  '%zz',
  '%E0%A4%A',
  '%ED%A0%80',
  '..%2F..',
  '%2e%2e',
  '%20',
  '%E2%80%AE',
  'x'.repeat(300),
  '__proto__',
  'constructor',
  '00000000-0000-0000-0000-000000000000',
];

// Query values, written as they go on the wire (already percent-encoded, or deliberately not validly).
const QUERY_VALUES = [
  '',
  '1',
  '0',
  '-0',
  '101',
  '1e400',
  'Infinity',
  '0x10',
  '%201',
  '1_000',
  'NaN',
  '%FF',
  '%C0%AF',
  '%00',
  '%',
  '%E2%80%8F',
  'ASCENDING',
  'ascending',
  'NEXT',
  'PREVIOUS',
  'createdAt[gt]=2026-01-01T00:00:00Z',
  'createdAt[gt]=',
  'and(',
  'or(a[eq]=1,)',
  '%22',
  'tags.value[eq]=%ED%A0%80',
  'account.id[eq]=%FF',
  'eyJ0IjoiMjAyNi0wMS0wMVQwMDowMDowMFoifQ.x',
  'AAAA.BBBB',
  '2026-01-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
  'camt053',
  'pdf',
  'USD',
  'usd',
];
const QUERY_NAMES = [
  'limit',
  'cursor',
  'direction',
  'sortOrder',
  'filters',
  'periodStart',
  'periodEnd',
  'asset',
  'format',
  'sort',
  '__proto__',
  'limit[]',
  '',
];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'application/json; charset=iso-8859-1',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/merge-patch+json',
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  ';;;',
  undefined,
];

const MONEY = ['"1e400"', '"-0"', '"0.0000000000001"', '"1e-7"', '" 1"', '"1_000"', '"0x10"', '"Infinity"', '1e400'];
const UNICODE = ['\\u0000', '\\ud800', '\\u202e', '\\u200f', '\\ufeff', 'é'];

/** The ways a body's bytes are spoiled; `at` and `byte` pick the place and the byte where one is needed. */
const BODY_SPOILERS: Record<string, (json: string, at: number, byte: number, other: string) => Buffer> = {
  asIs: (json) => Buffer.from(json),
  truncated: (json, at) => Buffer.from(json.slice(0, at % (json.length + 1))),
  byteFlipped: (json, at, byte) => {
    const bytes = Buffer.from(json);
    if (bytes.length > 0) bytes[at % bytes.length] = byte;
    return bytes;
  },
  latin1: (json) => Buffer.from(json.replace(/"([^"]*)"/, '"Comércio $1"'), 'latin1'),
  byteOrderMark: (json) => Buffer.from(`\ufeff${json}`),
  duplicateKey: (json, _at, _byte, other) => Buffer.from(json.replace(/^\{/, `{"accountId":"${other}",`)),
  protoKey: (json) => Buffer.from(json.replace(/^\{/, '{"__proto__":{"polluted":true},"constructor":{"a":1},')),
  money: (json, at) => Buffer.from(json.replace(/"\d+\.\d+"/g, MONEY[at % MONEY.length])),
  unicode: (json, at) => Buffer.from(json.replace(/"([A-Za-z][^"]*)"(?!:)/, `"${UNICODE[at % UNICODE.length]}$1"`)),
  deep: (json, at) => Buffer.from(`${'['.repeat(20 + (at % 5000))}${json}${']'.repeat(20 + (at % 5000))}`),
  empty: () => Buffer.alloc(0),
  whitespace: () => Buffer.from(' \r\n\t '),
  longString: (json) => Buffer.from(json.replace(/"([^"]*)"(?!:)/, `"${'z'.repeat(200_000)}"`)),
};

// What a server must never put in front of a client: stack frames, source paths, SQL and driver messages.
const INTERNALS =
  /node_modules|\bat [\w.<>]+ \(|\.ts:\d+|violates|relation "|syntax error at|duplicate key value|MikroORM|TypeError|ReferenceError|Cannot read prop/i;

describe('fuzzing the wire: bytes, ids, query strings and headers as clients get them wrong', function () {
  this.timeout(300_000);
  let server: Server;
  let port: number;
  let a: TestCustomer;
  let b: TestCustomer;
  let doc: OpenApiDocument;
  let ownIds: string[];
  let othersIds: string[];
  // Only the other customer knows these: an answer to the first customer that holds one has leaked it.
  const OTHERS_NAME = `Zeta Reservada ${randomUUID().slice(0, 8)} Ltda`;
  const OTHERS_HOLDER = `Reservadíssimo${randomUUID().slice(0, 6)}`;
  // Tokens a client may hold that are not valid (expired, unsigned, for another audience); made in `before`.
  const tokens: string[] = [];
  // One key sent with many different requests: the first is served, the others 422 IDEMPOTENCY_KEY_REUSED.
  const FIXED_KEY = randomUUID();

  before(async () => {
    const { app, http: client, services } = await stack();
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- Koa's handler answers its own errors
    server = createServer(app.callback());
    answerClientErrors(server, pino({ level: 'silent' }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    a = await newCustomer('Wire Fuzz A Ltda');
    b = await newCustomer('Wire Fuzz B Ltda');
    const mine = await activeAccount(a, ['BRL', 'USD']);
    const theirs = await activeAccount(b, ['BRL', 'USD'], { legalName: OTHERS_NAME });
    const ben = await client.post('/api/beneficiaries').set(a.auth).set(idem()).send(beneficiaryBody());
    const theirBen = await client
      .post('/api/beneficiaries')
      .set(b.auth)
      .set(idem())
      .send(beneficiaryBody(undefined, { holder: individualHolder({ firstName: OTHERS_HOLDER }) }));
    const theirSub = await client
      .post('/api/subscriptions')
      .set(b.auth)
      .set(idem())
      .send({ url: 'https://example.com/zeta', includeAll: true });
    ownIds = [mine.id, ben.body.id, ben.body.paymentInstructions[0].id];
    othersIds = [theirs.id, theirBen.body.id, theirBen.body.paymentInstructions[0].id, theirSub.body.id];
    expect(othersIds.every((id) => typeof id === 'string')).to.equal(true);
    doc = (await client.get('/openapi.json')).body;
    const claims = { client_id: a.clientId };
    const sign = (options: jwt.SignOptions) =>
      jwt.sign(claims, services.signingKey.privateKey, {
        algorithm: 'RS256',
        subject: a.customerId,
        issuer: services.config.jwtIssuer,
        audience: services.config.jwtAudience,
        ...options,
      });
    tokens.push(
      sign({ expiresIn: -10 }),
      jwt.sign({ sub: a.customerId }, '', { algorithm: 'none' }),
      sign({ expiresIn: 60, audience: 'someone-else' }),
    );
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Most often a form that authenticates (so requests reach the handlers), else one that clients get wrong. */
  function authorization(i: number): string | undefined {
    const valid = [`Bearer ${a.token}`, `bearer ${a.token}`, `Bearer  ${a.token}`];
    const invalid = [
      `Bearer ${a.token.slice(0, -3)}`,
      `Bearer ${tokens[0]}`,
      `Bearer ${tokens[1]}`,
      `Bearer ${tokens[2]}`,
      `Bearer ${b.token.slice(0, 20)}`,
      'Bearer',
      'Basic YTpi',
      undefined,
    ];
    return i % 10 < 8 ? valid[i % valid.length] : invalid[i % invalid.length];
  }

  function idempotencyKey(i: number): string | undefined {
    const invalid = ['', '   ', 'k'.repeat(4000), 'clé-é', `{${randomUUID()}}`, undefined];
    if (i % 10 < 6) return randomUUID();
    if (i % 10 < 8) return i % 2 ? FIXED_KEY : FIXED_KEY.toUpperCase();
    return invalid[i % invalid.length];
  }

  /** A body a route would take, when we know one without a round trip; `{}` otherwise. */
  function baselineFor(path: string): unknown {
    if (path === '/api/accounts') return accountBody();
    if (path.endsWith('/ubos') || path.includes('/ubos/')) return uboBody();
    if (path === '/api/beneficiaries') return beneficiaryBody();
    if (path === '/api/quotes')
      return { accountId: ownIds[0], sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '10.00' };
    if (path === '/api/operations/transfer')
      return { sourceAccountId: ownIds[0], targetAccountId: othersIds[0], amount: { value: '1.00', asset: 'BRL' } };
    if (path.startsWith('/api/subscriptions')) return { url: 'https://example.com/h', includeAll: true };
    if (path === '/api/oauth/client/token') return { clientId: a.clientId, clientSecret: 'not-the-secret' };
    return {};
  }

  const request = fc.record({
    route: fc.nat(),
    otherMethod: fc.nat({ max: 9 }),
    segments: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
    query: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }),
    auth: fc.nat(),
    key: fc.nat(),
    type: fc.nat(),
    spoiler: fc.constantFrom(...Object.keys(BODY_SPOILERS)),
    at: fc.nat({ max: 100_000 }),
    byte: fc.integer({ min: 0, max: 255 }),
  });

  it('answers every request in seconds, below 500, in the error shape, with nothing of another customer', async () => {
    const ops = operationsOf(doc);
    expect(ops.length).to.be.greaterThan(20);
    const methods = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'LOCK'];
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const op = ops[r.route % ops.length];
        // Mostly the method the route declares, so requests get past routing into the handlers.
        const method = r.otherMethod < 7 ? op.method.toUpperCase() : methods[r.otherMethod];
        let n = 0;
        const path = op.path.replace(/\{[A-Za-z]+\}/g, () => {
          const pick = r.segments[n++ % r.segments.length];
          const pool = [...ownIds, ...othersIds, randomUUID(), ownIds[0].toUpperCase(), ...SEGMENTS];
          return pool[pick % pool.length];
        });
        const query = r.query.map(
          ([k, v]) => `${QUERY_NAMES[k % QUERY_NAMES.length]}=${QUERY_VALUES[v % QUERY_VALUES.length]}`,
        );
        // A report's period, unless the generated query already names one (a repeated parameter is a case too).
        if (op.path === '/api/reports' && r.at % 3 !== 0)
          query.push('periodStart=2026-01-01T00:00:00Z', 'periodEnd=2027-01-01T00:00:00Z');
        const headers: Record<string, string> = {};
        const auth = authorization(r.auth);
        if (auth !== undefined) headers.Authorization = auth;
        const key = idempotencyKey(r.key);
        if (key !== undefined) headers['X-Idempotency-Key'] = key;
        let body: Buffer | undefined;
        if (!['GET', 'HEAD', 'DELETE', 'OPTIONS', 'TRACE'].includes(method) || r.at % 11 === 0) {
          const json = JSON.stringify(baselineFor(op.path));
          body = BODY_SPOILERS[r.spoiler](json, r.at, r.byte, othersIds[0]);
          // Most often JSON, so the spoiled bytes are what gets read.
          const type = r.type % 2 ? 'application/json' : CONTENT_TYPES[r.type % CONTENT_TYPES.length];
          if (type !== undefined) headers['Content-Type'] = type;
          headers['Content-Length'] = String(body.length);
        }
        const wire: WireRequest = {
          method,
          path: `${path}${query.length ? `?${query.join('&')}` : ''}`,
          headers,
          body,
        };
        const res = await exchange(port, wire);
        const picks = `${r.spoiler}, auth ${r.auth % 80}, key ${r.key % 10}, type ${r.type % CONTENT_TYPES.length}`;
        const what = `${method} ${wire.path.slice(0, 160)} [${picks}]`;
        seen.set(String(res.status), (seen.get(String(res.status)) ?? 0) + 1);
        expect(res.failure, `${what}: ${res.failure}`).to.equal(undefined);
        expect(res.status, `${what} answered ${res.status} ${res.text.slice(0, 300)}`).to.be.within(200, 499);
        expect(res.headers['x-request-id'], `${what}: X-Request-Id`).to.be.a('string');
        expect(res.text, `${what}: leaked internals ${res.text.slice(0, 300)}`).to.not.match(INTERNALS);
        for (const secret of [b.customerId, OTHERS_NAME, OTHERS_HOLDER, 'https://example.com/zeta'])
          expect(res.text, `${what}: holds another customer's ${secret}`).to.not.include(secret);
        // No request here holds U+FFFD: a success that does took it for bytes it could not read (decision 0265).
        if (res.status < 300) expect(res.text, `${what}: stored text the client never sent`).to.not.include('\ufffd');
        if (res.status >= 400 && method !== 'HEAD') {
          const error = JSON.parse(res.text) as Record<string, unknown>;
          expect(Object.keys(error).sort(), `${what}: ${res.text.slice(0, 300)}`).to.deep.equal([
            'code',
            'details',
            'message',
          ]);
          expect(error.code, what).to.match(/^[A-Z][A-Z_]*$/);
          expect(error.message, what).to.be.a('string').and.not.equal('');
          expect(error.details, what).to.be.an('object').and.not.an('array');
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    if (process.env.FUZZ_VERBOSE) console.log(JSON.stringify([...seen].sort()));
    // The run reached the handlers too, not only the front door's refusals.
    expect(
      [...seen.keys()].filter((s) => s.startsWith('2')),
      JSON.stringify([...seen]),
    ).to.not.deep.equal([]);
  });
});
