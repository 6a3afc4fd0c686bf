import { expect } from 'chai';
import {
  CATCH_UP_PERIODS,
  closedPeriodBefore,
  missedPeriods,
  parseStatementInterval,
} from '../../domain/statement-interval';

const at = (iso: string) => new Date(iso);
const iso = (periods: Array<{ start: Date; end: Date }>) =>
  periods.map((p) => `${p.start.toISOString().slice(0, 10)}..${p.end.toISOString().slice(0, 10)}`);

describe('STATEMENT_INTERVAL: closed periods and the periods a run missed', () => {
  const month = parseStatementInterval('month');
  const day = parseStatementInterval('day');

  it('closes calendar months and UTC days at 00:00 UTC, and ISO durations on the epoch grid', () => {
    expect(iso([closedPeriodBefore(month, at('2026-12-05T08:00:00Z'))])).to.deep.equal(['2026-11-01..2026-12-01']);
    expect(iso([closedPeriodBefore(month, at('2026-01-01T00:00:00Z'))])).to.deep.equal(['2025-12-01..2026-01-01']);
    expect(iso([closedPeriodBefore(day, at('2026-12-05T00:00:00Z'))])).to.deep.equal(['2026-12-04..2026-12-05']);
    const every = closedPeriodBefore(parseStatementInterval('PT30S'), at('2026-12-05T08:00:47Z'));
    expect([every.start.toISOString(), every.end.toISOString()]).to.deep.equal([
      '2026-12-05T08:00:00.000Z',
      '2026-12-05T08:00:30.000Z',
    ]);
  });

  it('owes the periods between the last issued one and the current one, oldest first', () => {
    const current = closedPeriodBefore(day, at('2026-12-05T00:00:03Z'));
    expect(iso(missedPeriods(day, at('2026-12-02T00:00:00Z'), current))).to.deep.equal([
      '2026-12-02..2026-12-03',
      '2026-12-03..2026-12-04',
    ]);
    // Across a year's end, in months.
    const january = closedPeriodBefore(month, at('2027-02-01T00:00:00Z'));
    expect(iso(missedPeriods(month, at('2026-11-01T00:00:00Z'), january))).to.deep.equal([
      '2026-11-01..2026-12-01',
      '2026-12-01..2027-01-01',
    ]);
  });

  it('owes nothing when the last issued period is the one before, or the current one, or none', () => {
    const current = closedPeriodBefore(day, at('2026-12-05T00:00:03Z'));
    expect(missedPeriods(day, at('2026-12-04T00:00:00Z'), current)).to.deep.equal([]);
    expect(missedPeriods(day, at('2026-12-05T00:00:00Z'), current)).to.deep.equal([]);
    expect(missedPeriods(day, undefined, current)).to.deep.equal([]);
    // An end off the grid (a statement of another interval): only whole periods after it.
    expect(iso(missedPeriods(day, at('2026-12-02T12:00:00Z'), current))).to.deep.equal(['2026-12-03..2026-12-04']);
  });

  it('owes at most CATCH_UP_PERIODS, the latest, and nothing for an ISO duration', () => {
    const current = closedPeriodBefore(day, at('2026-12-05T00:00:03Z'));
    const owed = missedPeriods(day, at('2025-12-05T00:00:00Z'), current);
    expect(owed).to.have.length(CATCH_UP_PERIODS);
    expect(owed[owed.length - 1].end.toISOString()).to.equal(current.start.toISOString());
    const every = parseStatementInterval('PT30S');
    expect(
      missedPeriods(every, at('2026-12-05T07:00:00Z'), closedPeriodBefore(every, at('2026-12-05T08:00:00Z'))),
    ).to.deep.equal([]);
  });
});
