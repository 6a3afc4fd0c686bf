import { expect } from 'chai';
import fc from 'fast-check';
import { CambioError } from '../../domain/errors';
import { parseFilters } from '../../lists/filter-parser';
import { FieldCatalogue, isIsoTimestamp, validateFilters } from '../../domain/list-filters';
import { compileFilters } from '../../db/lists/filter-sql';

const catalogue: FieldCatalogue = {
  status: { type: 'enum', values: ['PENDING', 'COMPLETED', 'FAILED'], sql: 'o.status' },
  'intent.type': { type: 'enum', values: ['SWAP', 'DEPOSIT', 'WITHDRAWAL'], sql: "o.intent->>'type'" },
  createdAt: { type: 'timestamp', sql: 'o.created_at' },
  accountId: { type: 'uuid', sql: 'o.account_id' },
  'owner.legalName': { type: 'string', sql: 'o.owner_legal_name' },
  'tags.key': { type: 'string', jsonArray: 'o.tags', prop: 'key' },
  'tags.value': { type: 'string', jsonArray: 'o.tags', prop: 'value' },
  'events.at': { type: 'timestamp', jsonArray: 'o.events', prop: 'at' },
};

const compile = (filter: string) => compileFilters(parseFilters(filter), catalogue);

function expectInvalid(filter: string, pattern: RegExp): CambioError {
  try {
    compile(filter);
  } catch (err) {
    expect(err).to.be.instanceOf(CambioError);
    const e = err as CambioError;
    expect(e.code).to.equal('INVALID_FILTER');
    expect(e.message).to.match(pattern);
    return e;
  }
  throw new Error(`expected ${JSON.stringify(filter)} to be rejected`);
}

const UUID = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';

describe('compileFilters', () => {
  it('compiles no filter to true', () => {
    expect(compileFilters(null, catalogue)).to.deep.equal({ sql: 'true', params: [] });
    expect(compile('')).to.deep.equal({ sql: 'true', params: [] });
  });

  it('compiles column comparisons with placeholders', () => {
    expect(compile('status[eq]=COMPLETED')).to.deep.equal({ sql: '(o.status = ?)', params: ['COMPLETED'] });
    expect(compile('status[ne]=FAILED')).to.deep.equal({ sql: '(o.status <> ?)', params: ['FAILED'] });
    expect(compile('owner.legalName[gte]=A;owner.legalName[lt]=B')).to.deep.equal({
      sql: '((o.owner_legal_name >= ?) AND (o.owner_legal_name < ?))',
      params: ['A', 'B'],
    });
  });

  it('compiles in to a placeholder list', () => {
    expect(compile('intent.type[in]=SWAP|DEPOSIT')).to.deep.equal({
      sql: "(o.intent->>'type' in (?, ?))",
      params: ['SWAP', 'DEPOSIT'],
    });
  });

  it('casts timestamps and passes them as strings, keeping microseconds', () => {
    expect(compile('createdAt[gt]=2024-01-31T12:00:00.123456Z;createdAt[lte]=2024-02-29T00:00:00Z')).to.deep.equal({
      sql: '((o.created_at > ?::timestamptz) AND (o.created_at <= ?::timestamptz))',
      params: ['2024-01-31T12:00:00.123456Z', '2024-02-29T00:00:00Z'],
    });
    expect(compile('createdAt[in]=2024-01-01T00:00:00Z|2024-01-02T00:00:00Z').sql).to.equal(
      '(o.created_at in (?::timestamptz, ?::timestamptz))',
    );
  });

  it('lower-cases uuids', () => {
    expect(compile(`accountId[eq]=${UUID.toUpperCase()}`)).to.deep.equal({ sql: '(o.account_id = ?)', params: [UUID] });
  });

  it('compiles jsonb array fields to EXISTS / NOT EXISTS', () => {
    const from = 'SELECT 1 FROM jsonb_array_elements(o.tags) AS e WHERE';
    expect(compile('tags.key[eq]=team')).to.deep.equal({
      sql: `(EXISTS (${from} e->>'key' = ?))`,
      params: ['team'],
    });
    expect(compile('tags.value[ne]=ops')).to.deep.equal({
      sql: `(NOT EXISTS (${from} e->>'value' = ?))`,
      params: ['ops'],
    });
    expect(compile('tags.value[in]=ops|dev')).to.deep.equal({
      sql: `(EXISTS (${from} e->>'value' in (?, ?)))`,
      params: ['ops', 'dev'],
    });
    expect(compile('events.at[gt]=2024-01-01T00:00:00Z').sql).to.equal(
      "(EXISTS (SELECT 1 FROM jsonb_array_elements(o.events) AS e WHERE (e->>'at')::timestamptz > ?::timestamptz))",
    );
  });

  it('compiles nested groups with params in textual order', () => {
    expect(
      compile(
        'or(and(status[eq]=PENDING,createdAt[lt]=2024-01-01T00:00:00Z),tags.key[eq]=team);owner.legalName[eq]="Acme, ' +
          'Inc."',
      ),
    ).to.deep.equal({
      sql:
        '((((o.status = ?) AND (o.created_at < ?::timestamptz)) OR (EXISTS (SELECT 1 FROM ' +
        "jsonb_array_elements(o.tags) AS e WHERE e->>'key' = ?)))" +
        ' AND (o.owner_legal_name = ?))',
      params: ['PENDING', '2024-01-01T00:00:00Z', 'team', 'Acme, Inc.'],
    });
  });

  it('never puts values into the SQL text', () => {
    const hostile = `owner.legalName[eq]="x'); DROP TABLE o; --";tags.key[in]="'"|"?"`;
    const { sql, params } = compile(hostile);
    expect(sql).to.not.include('DROP');
    expect(params).to.deep.equal(["x'); DROP TABLE o; --", "'", '?']);
    expect(sql.split('?').length - 1).to.equal(params.length);
  });

  it('refuses a catalogue whose jsonb property would break the SQL', () => {
    const bad: FieldCatalogue = { 'tags.x': { type: 'string', jsonArray: 'o.tags', prop: "k'ey" } };
    expect(() => compileFilters(parseFilters('tags.x[eq]=1'), bad)).to.throw(/unsafe jsonb property/);
  });

  describe('validation errors', () => {
    it('rejects unknown fields, listing the allowed ones', () => {
      const e = expectInvalid(
        'status[eq]=PENDING;colour[eq]=red',
        /Unknown filter field 'colour'; allowed fields: .*accountId/,
      );
      expect(e.details).to.deep.equal({ field: 'colour' });
    });

    it('does not resolve fields through the prototype', () => {
      expectInvalid('constructor[eq]=x', /Unknown filter field 'constructor'/);
      expectInvalid('__proto__[eq]=x', /Unknown filter field '__proto__'/);
      expectInvalid('toString[eq]=x', /Unknown filter field/);
    });

    it('rejects bad timestamps', () => {
      expectInvalid(
        'createdAt[gt]=yesterday',
        /Value "yesterday" for field 'createdAt' is not an ISO 8601 UTC timestamp/,
      );
      expectInvalid('createdAt[gt]=2024-01-31', /not an ISO 8601/);
      expectInvalid('createdAt[gt]=2024-01-31T12:00:00+01:00', /not an ISO 8601 UTC/);
      expectInvalid('createdAt[gt]=2023-02-29T00:00:00Z', /not an ISO 8601/);
      expectInvalid('createdAt[in]=2024-01-01T00:00:00Z|2024-13-01T00:00:00Z', /2024-13-01/);
      expectInvalid('events.at[lt]=soon', /field 'events.at'/);
    });

    it('rejects enum values outside the set and malformed uuids', () => {
      expectInvalid('status[eq]=DONE', /Value "DONE" for field 'status' must be one of PENDING, COMPLETED, FAILED/);
      expectInvalid('intent.type[in]=SWAP|swap', /"swap"/);
      expectInvalid('accountId[eq]=123', /Value "123" for field 'accountId' is not a UUID/);
    });

    it('rejects ordering operators on enum and uuid fields', () => {
      expectInvalid('status[gt]=PENDING', /Operator 'gt' is not supported for enum field 'status'/);
      expectInvalid(`accountId[lte]=${UUID}`, /Operator 'lte' is not supported for uuid field/);
    });

    it('rejects NUL characters', () => {
      expectInvalid('owner.legalName[eq]=a\u0000b', /NUL/);
    });

    it('truncates long values in messages', () => {
      const e = expectInvalid(`status[eq]=${'X'.repeat(1000)}`, /must be one of/);
      expect(e.message.length).to.be.below(200);
    });

    it('validates hand-built ASTs too', () => {
      expect(() =>
        validateFilters({ kind: 'cond', field: 'status', op: 'eq', values: ['PENDING', 'FAILED'] }, catalogue),
      ).to.throw(CambioError, /exactly one value/);
    });
  });

  describe('isIsoTimestamp', () => {
    it('accepts UTC timestamps with up to microsecond precision', () => {
      for (const ok of ['2024-02-29T23:59:59Z', '2024-01-01T00:00:00.1Z', '2024-01-01T00:00:00.123456Z']) {
        expect(isIsoTimestamp(ok), ok).to.equal(true);
      }
      for (const bad of [
        '2024-01-01T00:00:00.1234567Z',
        '2024-01-01T24:00:00Z',
        '2024-04-31T00:00:00Z',
        '0000-01-01T00:00:00Z',
        '2024-01-01t00:00:00z',
      ]) {
        expect(isIsoTimestamp(bad), bad).to.equal(false);
      }
    });

    it('accepts offsets and a space separator only when asked', () => {
      expect(isIsoTimestamp('2024-01-01 00:00:00.5+02:00')).to.equal(false);
      expect(isIsoTimestamp('2024-01-01 00:00:00.5+02:00', true)).to.equal(true);
    });

    it('agrees with Date for every millisecond-precision instant', () => {
      fc.assert(
        fc.property(
          fc.date({
            min: new Date('0001-01-01T00:00:00Z'),
            max: new Date('9999-12-31T23:59:59Z'),
            noInvalidDate: true,
          }),
          (d) => {
            expect(isIsoTimestamp(d.toISOString())).to.equal(true);
          },
        ),
      );
    });
  });

  it('property: one placeholder per param, and values never appear in the SQL', () => {
    const value = fc.string({ minLength: 1, maxLength: 10 }).filter((v) => !v.includes('\u0000'));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('owner.legalName', 'tags.key', 'tags.value'), value), {
          minLength: 1,
          maxLength: 5,
        }),
        (conds) => {
          const ast = {
            kind: 'or' as const,
            children: conds.map(([field, v]) => ({
              kind: 'cond' as const,
              field,
              op: 'eq' as const,
              values: ['§' + v],
            })),
          };
          const { sql, params } = compileFilters(ast, catalogue);
          expect(params).to.deep.equal(conds.map(([, v]) => '§' + v));
          expect(sql.split('?').length - 1).to.equal(params.length);
          expect(sql).to.not.include('§');
        },
      ),
    );
  });
});
