// Hostile values and the plumbing to put one anywhere in a request, for test/integration/fuzz.test.ts.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import type { Response } from 'supertest';

/** Nested `depth` levels deep, as an object or an array. */
const nested = (depth: number, asArray: boolean): unknown => {
  let value: unknown = asArray ? [] : {};
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { a: value };
  return value;
};

const HOSTILE_STRINGS = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '\udc00\ud800',
  'ok\ud83d',
  '💥 ünïcødé',
  '',
  ' ',
  '\t\n',
  'x'.repeat(5_000),
  'y'.repeat(70_000),
  '-1',
  '0',
  '-0',
  '1e400',
  '1E5',
  '0x10',
  '9'.repeat(16),
  '9'.repeat(40),
  `${'9'.repeat(33)}.123456`,
  '0.0000001',
  '999999999999999.99',
  '1000000000000000.00',
  `-${'9'.repeat(20)}`,
  '00000000000000000000000000000001.00',
  'NaN',
  'Infinity',
  'null',
  'true',
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  `${randomUUID()}x`,
  '0000-01-01',
  '9999-12-31',
  '1899-12-31',
  '2020-02-30',
  '+275760-09-13',
  '-000001-01-01T00:00:00Z',
  '2026-01-01T00:00:00Z',
  'createdAt[gt]=0000-01-01T00:00:00Z',
  'createdAt[gte]=9999-12-31T23:59:59-15:00',
  'createdAt[lt]=2026-01-01T00:00:00.1234567Z',
  'createdAt[eq]=2026-13-01T00:00:00Z',
  'createdAt[in]=1|2',
  `${'and('.repeat(40)}a[eq]=1${')'.repeat(40)}`,
  `tags.key[in]=${'a|'.repeat(300)}a`,
  'owner.legalName[eq]=\u0000',
  'tags.value[eq]=\ud800',
  'a[eq]="',
  '__proto__[eq]=1',
  'constructor[eq]=1',
  `tags.value[eq]=${'x'.repeat(4000)}`,
  'account.id[eq]=ZZZ',
  'currentState.status[gt]=x',
  'sourceAmount.asset[in]=USD|BRL',
  'or(a[eq]=1,b[eq]=2)',
  ';;;',
  'x[eq]=1;',
  'abc.def',
  'a'.repeat(2000),
  `${Buffer.from('{"t":"99999-01-01T00:00:00Z","i":"x","o":"ASC"}').toString('base64url')}.sig`,
  '%00',
  '%E0%A4%A',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '{{7*7}}',
  '${jndi:ldap://x}',
];

const HOSTILE_OTHERS: unknown[] = [
  -1,
  0,
  1,
  1.5,
  -0.000001,
  1e308,
  -1e308,
  2 ** 53 + 1,
  Number.MAX_SAFE_INTEGER,
  true,
  false,
  null,
  [],
  {},
  [[[[]]]],
  { a: { b: { c: {} } } },
  nested(60, false),
  nested(60, true),
  Array.from({ length: 1000 }, () => 'a'),
  ['\u0000'],
  { '\u0000': 1 },
  { '\ud800': 'x' },
  { value: '9'.repeat(40), asset: 'USD' },
  { value: '1.00', asset: 'XXX' },
  { $ref: '#/x' },
  { __proto__: { polluted: true } },
];

export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_OTHERS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
);

export type Location = { in: 'path' | 'query' | 'header'; name: string } | { in: 'body'; pointer: string[] };

export const asText = (value: unknown): string =>
  typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
// Node refuses to send a header holding control characters; such values are the other locations' job.
export const sendableHeader = (s: string) => /^[\t\x20-\x7e]*$/.test(s);

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) is sent as the three bytes a careless
 * encoder would produce (WTF-8), so the server meets it too.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (const ch of text) {
    const unit = ch.charCodeAt(0);
    if (ch.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

/** Every leaf of the baseline body, the body itself and one unknown property. */
export function bodyPointers(value: unknown, prefix: string[] = []): string[][] {
  const out: string[][] = [prefix];
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...bodyPointers(v, [...prefix, k]));
    if (!Array.isArray(value)) out.push([...prefix, 'unexpectedField']);
  }
  return out;
}

export function withValueAt(body: unknown, pointer: string[], value: unknown): unknown {
  if (pointer.length === 0) return value;
  const copy = structuredClone(body) as Record<string, unknown>;
  let node = copy;
  for (const key of pointer.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[pointer[pointer.length - 1]] = value;
  return copy;
}

/** The documented error shape and the headers every answer of the app carries. */
export function expectDocumentedAnswer(res: Response, what: string): void {
  const body = JSON.stringify(res.body)?.slice(0, 300);
  expect(res.status, `${what} answered ${res.status} ${body}`).to.be.below(500);
  expect(res.headers['x-request-id'], `${what}: X-Request-Id`).to.be.a('string').and.not.equal('');
  // 431 (a header past 16 KiB) is answered by the HTTP server before the app, which sets the version.
  if (res.status !== 431) expect(res.headers['x-service-version'], `${what}: X-Service-Version`).to.be.a('string');
  if (res.status >= 400) {
    expect(res.body, `${what}: error body ${body}`).to.be.an('object');
    expect(res.body.code, `${what}: code in ${body}`)
      .to.be.a('string')
      .and.match(/^[A-Z][A-Z_]*$/);
    expect(res.body.message, `${what}: message in ${body}`).to.be.a('string').and.not.equal('');
    expect(res.body.details, `${what}: details in ${body}`).to.be.an('object').and.not.an('array');
  }
}
