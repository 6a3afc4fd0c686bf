import { expect } from 'chai';
import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import { CambioError } from '../../domain/errors';
import { CursorPosition, decodeCursor, encodeCursor } from '../../lists/cursor';
import { keysetPage, trimPage } from '../../db/lists/keyset';
import { pageCursors } from '../../lists/page-cursors';
import { filterFingerprint } from '../../lists/filter-fingerprint';

const SECRET = 'test-secret-0123456789';
const ID = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';
const pos: CursorPosition = { createdAt: '2024-01-31T12:00:00.123456Z', id: ID, sortOrder: 'DESCENDING' };

function expectInvalidCursor(cursor: string, secret: string = SECRET): void {
  try {
    decodeCursor(cursor, secret);
  } catch (err) {
    expect(err).to.be.instanceOf(CambioError);
    expect((err as CambioError).code).to.equal('INVALID_CURSOR');
    return;
  }
  throw new Error(`expected ${JSON.stringify(cursor)} to be rejected`);
}

// Builds a correctly signed cursor around an arbitrary payload, to test post-verification checks.
const signed = (payload: unknown): string => {
  const body = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)).toString('base64url');
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
};

describe('cursor', () => {
  it('round-trips a position, keeping microseconds', () => {
    const c = encodeCursor(pos, SECRET);
    expect(c).to.match(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c, SECRET)).to.deep.equal(pos);
  });

  it('uses the documented payload', () => {
    const body = encodeCursor({ ...pos, sortOrder: 'ASCENDING' }, SECRET).split('.')[0];
    expect(JSON.parse(Buffer.from(body, 'base64url').toString())).to.deep.equal({ t: pos.createdAt, i: ID, o: 'ASC' });
  });

  it('accepts a Buffer secret and Postgres-style timestamps', () => {
    const p: CursorPosition = { createdAt: '2024-01-31 12:00:00.5+00:00', id: ID, sortOrder: 'ASCENDING' };
    expect(decodeCursor(encodeCursor(p, Buffer.from(SECRET)), Buffer.from(SECRET))).to.deep.equal(p);
  });

  it('rejects a tampered payload or signature', () => {
    const [body, sig] = encodeCursor(pos, SECRET).split('.');
    const forged = Buffer.from(JSON.stringify({ t: '2030-01-01T00:00:00Z', i: ID, o: 'DESC' })).toString('base64url');
    expectInvalidCursor(`${forged}.${sig}`);
    const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
    expectInvalidCursor(`${body}.${flipped}`);
    expectInvalidCursor(`${body}.${sig.slice(0, -1)}`);
    expectInvalidCursor(`${body}.${sig}A`);
    expectInvalidCursor(`${body}x.${sig}`);
  });

  it('rejects a cursor signed with another secret', () => {
    expectInvalidCursor(encodeCursor(pos, 'other-secret'));
  });

  it('verifies a cursor only in the scope it was issued for (decision 0182)', () => {
    const c = encodeCursor(pos, SECRET, 'customer-a\noperations o');
    expect(decodeCursor(c, SECRET, 'customer-a\noperations o')).to.deep.equal(pos);
    for (const scope of ['customer-b\noperations o', 'customer-a\naccounts a', '']) {
      expect(() => decodeCursor(c, SECRET, scope)).to.throw(CambioError, /list that issued it/);
    }
    expect(() => decodeCursor(encodeCursor(pos, SECRET), SECRET, 'customer-a\noperations o')).to.throw(CambioError);
  });

  it('carries the fingerprint of its filters; one issued before it had none reads without (decision 0275)', () => {
    const filters = filterFingerprint({ kind: 'cond', field: 'owner.legalName', op: 'eq', values: ['Beta'] });
    expect(filters).to.not.equal(filterFingerprint(null));
    expect(decodeCursor(encodeCursor({ ...pos, filters }, SECRET), SECRET)).to.deep.equal({ ...pos, filters });
    expect(decodeCursor(signed({ t: pos.createdAt, i: ID, o: 'DESC' }), SECRET)).to.deep.equal(pos);
    expectInvalidCursor(signed({ t: pos.createdAt, i: ID, o: 'DESC', f: 7 }));
  });

  it('rejects undecodable input', () => {
    for (const junk of ['', 'abc', 'a.b.c', '.', 'abc.', '!!!.???', 'a b.c', 'x'.repeat(5000)])
      expectInvalidCursor(junk);
  });

  it('rejects signed payloads with bad contents', () => {
    expectInvalidCursor(signed('not json'));
    expectInvalidCursor(signed([1, 2]));
    expectInvalidCursor(signed(null));
    expectInvalidCursor(signed({ t: pos.createdAt, i: ID }));
    expectInvalidCursor(signed({ t: pos.createdAt, i: ID, o: 'UP' }));
    expectInvalidCursor(signed({ t: 'yesterday', i: ID, o: 'ASC' }));
    expectInvalidCursor(signed({ t: pos.createdAt, i: 'not-a-uuid', o: 'ASC' }));
    expect(decodeCursor(signed({ t: pos.createdAt, i: ID, o: 'DESC' }), SECRET)).to.deep.equal(pos);
  });

  it('refuses to encode invalid positions or use an empty secret', () => {
    expect(() => encodeCursor({ ...pos, createdAt: 'now' }, SECRET)).to.throw(/cannot encode cursor/);
    expect(() => encodeCursor({ ...pos, id: 'x' }, SECRET)).to.throw(/cannot encode cursor/);
    expect(() => encodeCursor(pos, '')).to.throw(/secret/);
    expect(() => decodeCursor('a.b', '')).to.throw(/secret/);
  });

  describe('properties', () => {
    const timestamp = fc
      .tuple(
        fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T23:59:59Z'), noInvalidDate: true }),
        fc.option(fc.integer({ min: 0, max: 999 }), { nil: undefined }),
      )
      .map(([d, micros]) => {
        const iso = d.toISOString();
        return micros === undefined ? iso : `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
      });
    const position = fc.record<CursorPosition>({
      createdAt: timestamp,
      id: fc.uuid(),
      sortOrder: fc.constantFrom('ASCENDING', 'DESCENDING'),
    });
    const secret = fc.string({ minLength: 1, maxLength: 40 });

    it('decode(encode(p)) equals p', () => {
      fc.assert(
        fc.property(position, secret, (p, s) => {
          expect(decodeCursor(encodeCursor(p, s), s)).to.deep.equal(p);
        }),
        {
          numRuns: 500,
        },
      );
    });

    it('any single-character change is rejected', () => {
      fc.assert(
        fc.property(position, fc.nat(), fc.constantFrom(...'ABCxyz019-_.'), (p, at, ch) => {
          const c = encodeCursor(p, SECRET);
          const i = at % c.length;
          fc.pre(c[i] !== ch);
          expectInvalidCursor(c.slice(0, i) + ch + c.slice(i + 1));
        }),
        { numRuns: 500 },
      );
    });
  });
});

describe('keysetPage', () => {
  const cols = { createdAtSql: 'o.created_at', idSql: 'o.id' };
  const asc: CursorPosition = { ...pos, sortOrder: 'ASCENDING' };

  it('has no condition without a cursor, and treats PREVIOUS as the first page', () => {
    for (const direction of ['NEXT', 'PREVIOUS'] as const) {
      expect(keysetPage({ ...cols, sortOrder: 'DESCENDING', direction })).to.deep.equal({
        where: { sql: 'true', params: [] },
        orderBy: 'o.created_at DESC, o.id DESC',
        reverseResults: false,
      });
    }
  });

  it('builds the four cursor cases', () => {
    const params = [pos.createdAt, ID];
    expect(keysetPage({ ...cols, sortOrder: 'DESCENDING', direction: 'NEXT', cursor: pos })).to.deep.equal({
      where: { sql: '(o.created_at, o.id) < (?::timestamptz, ?)', params },
      orderBy: 'o.created_at DESC, o.id DESC',
      reverseResults: false,
    });
    expect(keysetPage({ ...cols, sortOrder: 'DESCENDING', direction: 'PREVIOUS', cursor: pos })).to.deep.equal({
      where: { sql: '(o.created_at, o.id) > (?::timestamptz, ?)', params },
      orderBy: 'o.created_at ASC, o.id ASC',
      reverseResults: true,
    });
    expect(keysetPage({ ...cols, sortOrder: 'ASCENDING', direction: 'NEXT', cursor: asc })).to.deep.equal({
      where: { sql: '(o.created_at, o.id) > (?::timestamptz, ?)', params },
      orderBy: 'o.created_at ASC, o.id ASC',
      reverseResults: false,
    });
    expect(keysetPage({ ...cols, sortOrder: 'ASCENDING', direction: 'PREVIOUS', cursor: asc })).to.deep.equal({
      where: { sql: '(o.created_at, o.id) < (?::timestamptz, ?)', params },
      orderBy: 'o.created_at DESC, o.id DESC',
      reverseResults: true,
    });
  });

  it('rejects a cursor issued for the other sort order', () => {
    expect(() => keysetPage({ ...cols, sortOrder: 'ASCENDING', direction: 'NEXT', cursor: pos }))
      .to.throw(CambioError, /issued for DESCENDING/)
      .with.property('code', 'INVALID_CURSOR');
  });
});

// An in-memory model of the table: walking pages NEXT then PREVIOUS with the real cursors must
// visit every row exactly once and come back to the same pages.
describe('pagination over an in-memory table', () => {
  type Row = { createdAt: string; id: string };
  const row = (sec: number, n: number): Row => ({
    createdAt: `2024-01-01T00:00:${String(sec).padStart(2, '0')}.000001Z`,
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  });
  const key = (r: Row): string => `${r.createdAt}|${r.id}`; // fixed-width, so string order = key order
  const getters = { getCreatedAt: (r: Row) => r.createdAt, getId: (r: Row) => r.id };

  function fetchPage(
    table: Row[],
    sortOrder: 'ASCENDING' | 'DESCENDING',
    direction: 'NEXT' | 'PREVIOUS',
    cursor: string | null,
    limit: number,
  ) {
    const c = cursor === null ? undefined : decodeCursor(cursor, SECRET);
    const plan = keysetPage({ sortOrder, direction, cursor: c, createdAtSql: 'c', idSql: 'i' });
    const fetchAsc = plan.orderBy.endsWith('ASC');
    const ck = c === undefined ? null : `${c.createdAt}|${c.id}`;
    const fetched = [...table]
      .sort((a, b) => (fetchAsc ? 1 : -1) * key(a).localeCompare(key(b)))
      .filter((r) => ck === null || (fetchAsc ? key(r) > ck : key(r) < ck))
      .slice(0, limit + 1);
    const { rows, hasMoreInFetchDirection } = trimPage(fetched, limit, plan.reverseResults);
    const cursors = pageCursors(rows, {
      ...getters,
      hasMoreInFetchDirection,
      direction,
      hadCursor: c !== undefined,
      filters: filterFingerprint(null),
      secret: SECRET,
      sortOrder,
    });
    return { rows, ...cursors };
  }

  it('walks forward and back consistently', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 99 })), {
          selector: ([, n]) => n,
          maxLength: 25,
        }),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom('ASCENDING' as const, 'DESCENDING' as const),
        (spec, limit, sortOrder) => {
          const table = spec.map(([s, n]) => row(s, n));
          const pages = [fetchPage(table, sortOrder, 'NEXT', null, limit)];
          expect(pages[0].previousCursor).to.equal(null);
          while (pages[pages.length - 1].nextCursor !== null) {
            pages.push(fetchPage(table, sortOrder, 'NEXT', pages[pages.length - 1].nextCursor, limit));
          }
          const seen = pages.flatMap((p) => p.rows.map(key));
          const expected = table.map(key).sort();
          expect(seen).to.deep.equal(sortOrder === 'ASCENDING' ? expected : expected.reverse());
          if (table.length === 0) expect(pages[0]).to.deep.equal({ rows: [], previousCursor: null, nextCursor: null });
          // Walk back from the last page: each PREVIOUS page equals the page visited before it.
          for (let i = pages.length - 1; i > 0; i--) {
            const back = fetchPage(table, sortOrder, 'PREVIOUS', pages[i].previousCursor, limit);
            expect(back.rows).to.deep.equal(pages[i - 1].rows);
            expect(back.nextCursor).to.not.equal(null);
            expect(back.previousCursor === null).to.equal(i === 1);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
