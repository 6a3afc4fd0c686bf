import { expect } from 'chai';
import fc from 'fast-check';
import { CambioError } from '../../domain/errors';
import { parseFilters } from '../../lists/filter-parser';
import { compileFilters } from '../../db/lists/filter-sql';
import { isoMicros, parsePeriod, splitPeriod, toMillisecondWindow } from '../../domain/report-period';
import { REPORT_FIELDS } from '../../db/repositories/reports';
import { codeOf } from '../helpers/errors';

describe('report window', () => {
  it('accepts UTC timestamps with a trailing Z, fractional seconds optional, and echoes them as toISOString()', () => {
    const p = parsePeriod('2026-11-01T00:00:00Z', '2026-11-02T12:30:00.5Z');
    expect(p.start.echo).to.equal('2026-11-01T00:00:00.000Z');
    expect(p.end.echo).to.equal('2026-11-02T12:30:00.500Z');
    expect(parsePeriod('2026-11-01T00:00:00.123456Z', '2026-11-01T00:00:01Z').start.echo).to.equal(
      '2026-11-01T00:00:00.123Z',
    );
  });

  it('answers VALIDATION_ERROR for a missing or malformed bound, naming it', () => {
    const bad = [
      undefined,
      '',
      '2026-11-01',
      '2026-11-01T00:00:00',
      '2026-11-01T00:00:00+00:00',
      '2026-11-01 00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-11-01T24:00:00Z',
      '2026-11-01T00:00:00.1234567Z',
      '2026-11-01t00:00:00z',
      'yesterday',
      '1700000000',
    ];
    for (const value of bad) {
      try {
        parsePeriod(value, '2030-01-01T00:00:00Z');
        expect.fail(`accepted ${value}`);
      } catch (err) {
        expect((err as CambioError).code, String(value)).to.equal('VALIDATION_ERROR');
        expect((err as CambioError).details).to.have.nested.property('errors[0].path', '/query/periodStart');
      }
      expect(codeOf(() => parsePeriod('2020-01-01T00:00:00Z', value))).to.equal('VALIDATION_ERROR');
    }
  });

  it('answers INVALID_PERIOD when the end is not after the start, to the microsecond', () => {
    expect(codeOf(() => parsePeriod('2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z'))).to.equal('INVALID_PERIOD');
    expect(codeOf(() => parsePeriod('2026-11-02T00:00:00Z', '2026-11-01T00:00:00Z'))).to.equal('INVALID_PERIOD');
    expect(codeOf(() => parsePeriod('2026-11-01T00:00:00.000002Z', '2026-11-01T00:00:00.000001Z'))).to.equal(
      'INVALID_PERIOD',
    );
    expect(parsePeriod('2026-11-01T00:00:00.000001Z', '2026-11-01T00:00:00.000002Z').end.micros).to.equal(
      1793491200000002n,
    );
  });

  it("reads a report's window to the millisecond above each bound, and echoes that window (movements are ms)", () => {
    const w = toMillisecondWindow(parsePeriod('2026-11-01T00:00:00.794001Z', '2026-11-01T00:00:01.000999Z'));
    expect([w.start.echo, w.end.echo]).to.deep.equal(['2026-11-01T00:00:00.795Z', '2026-11-01T00:00:01.001Z']);
    expect(w.start.micros).to.equal(1793491200795000n);
    const whole = toMillisecondWindow(parsePeriod('2026-11-01T00:00:00.794Z', '2026-11-01T00:00:01Z'));
    expect([whole.start.echo, whole.end.echo]).to.deep.equal(['2026-11-01T00:00:00.794Z', '2026-11-01T00:00:01.000Z']);
    // Before the epoch too: up is towards the future.
    const old = toMillisecondWindow(parsePeriod('1969-12-31T23:59:59.999001Z', '1970-01-01T00:00:00Z'));
    expect(old.start.echo).to.equal('1970-01-01T00:00:00.000Z');
  });

  it('splits a window into whole UTC days and its partial edges', () => {
    expect(splitPeriod(parsePeriod('2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z'))).to.deep.equal({
      days: { from: '2026-11-01', to: '2026-12-01' },
      edges: [],
    });
    expect(splitPeriod(parsePeriod('2026-11-01T10:00:00Z', '2026-11-03T00:00:00.000001Z'))).to.deep.equal({
      days: { from: '2026-11-02', to: '2026-11-03' },
      edges: [
        { from: '2026-11-01T10:00:00.000000Z', to: '2026-11-02T00:00:00.000000Z' },
        { from: '2026-11-03T00:00:00.000000Z', to: '2026-11-03T00:00:00.000001Z' },
      ],
    });
    expect(splitPeriod(parsePeriod('2026-11-01T10:00:00Z', '2026-11-02T09:00:00Z'))).to.deep.equal({
      days: null,
      edges: [{ from: '2026-11-01T10:00:00.000000Z', to: '2026-11-02T09:00:00.000000Z' }],
    });
    expect(splitPeriod(parsePeriod('1969-12-30T12:00:00Z', '1970-01-01T00:00:00Z')).days).to.deep.equal({
      from: '1969-12-31',
      to: '1970-01-01',
    });
  });

  it('covers every instant of the window exactly once (property)', () => {
    const DAY = 86_400_000_000n;
    const instant = fc.bigInt({ min: -10n * DAY, max: 400n * DAY });
    fc.assert(
      fc.property(instant, instant, instant, (a, b, t) => {
        fc.pre(a !== b);
        const [lo, hi] = a < b ? [a, b] : [b, a];
        const split = splitPeriod(parsePeriod(isoMicros(lo), isoMicros(hi)));
        const micros = (iso: string) => parsePeriod(iso, '9999-12-31T23:59:59Z').start.micros;
        let covered = split.edges.filter((e) => micros(e.from) <= t && t < micros(e.to)).length;
        if (split.days) {
          const dayOf = t >= 0n ? t / DAY : (t - DAY + 1n) / DAY;
          const day = new Date(Number(dayOf * 86_400_000n)).toISOString().slice(0, 10);
          if (split.days.from <= day && day < split.days.to) covered++;
        }
        expect(covered, `t=${t} in [${lo}, ${hi})`).to.equal(lo <= t && t < hi ? 1 : 0);
      }),
      { numRuns: 500 },
    );
  });
});

describe('report filters', () => {
  const compile = (f: string) => compileFilters(parseFilters(f), REPORT_FIELDS);
  const account = '3f0c2a9e-1b2c-4d5e-8f90-123456789abc';

  it('takes account.id, asset, tags.key and tags.value with eq, joined by ;, and() and or()', () => {
    const c = compile(`account.id[eq]=${account};or(asset[eq]=BRL,and(tags.key[eq]=team,tags.value[eq]="a,b"))`);
    expect(c.params).to.deep.equal([account, 'BRL', 'team', 'a,b']);
    expect(c.sql).to.contain('m.account_id = ?').and.to.contain('m.asset = ?').and.to.contain(' OR ');
  });

  it('answers INVALID_FILTER for any other operator or field', () => {
    for (const f of [
      `account.id[ne]=${account}`,
      'asset[in]=BRL|USD',
      'tags.key[gt]=a',
      'tags.value[lte]=a',
      'asset[like]=BRL',
      'createdAt[eq]=2026-11-01T00:00:00Z',
      'intent.type[eq]=SWAP',
      'direction[eq]=INFLOW',
      'amount[eq]=1',
      'constructor[eq]=x',
    ]) {
      expect(
        codeOf(() => compile(f)),
        f,
      ).to.equal('INVALID_FILTER');
    }
  });

  it('answers INVALID_FILTER for a value that cannot match its field', () => {
    expect(codeOf(() => compile('account.id[eq]=not-a-uuid'))).to.equal('INVALID_FILTER');
    expect(codeOf(() => compile('asset[eq]=XYZ'))).to.equal('INVALID_FILTER');
    expect(codeOf(() => compile('asset[eq]=BRL;'))).to.equal('INVALID_FILTER');
  });
});
