// STATEMENT_INTERVAL (decision 0073): the periods issued statements close. `month` (calendar months, UTC), `day` (UTC
// days) or an ISO 8601 duration such as PT30S (periods aligned on the Unix epoch, as Temporal's interval schedules
// are).
export type StatementInterval = { kind: 'month' } | { kind: 'day' } | { kind: 'every'; ms: number; text: string };

const DURATION_RE = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/;

export function parseStatementInterval(text: string): StatementInterval {
  if (text === 'month' || text === 'day') return { kind: text };
  const m = DURATION_RE.exec(text);
  const [d, h, mi, s] = (m ?? []).slice(1).map((x) => Number(x ?? 0));
  const ms = (((d * 24 + h) * 60 + mi) * 60 + s) * 1000;
  if (!m || text === 'P' || text.endsWith('T') || !(ms >= 1000)) {
    throw new Error(`STATEMENT_INTERVAL must be month, day or an ISO 8601 duration such as PT30S, got "${text}"`);
  }
  return { kind: 'every', ms, text };
}

/** The last period that closed at or before `at`: `[start, end)` with `end <= at`. */
export function closedPeriodBefore(interval: StatementInterval, at: Date): { start: Date; end: Date } {
  switch (interval.kind) {
    case 'month': {
      const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
      return { start: new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() - 1, 1)), end };
    }
    case 'day': {
      const end = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
      return { start: new Date(end.getTime() - 86_400_000), end };
    }
    case 'every': {
      const end = Math.floor(at.getTime() / interval.ms) * interval.ms;
      return { start: new Date(end - interval.ms), end: new Date(end) };
    }
  }
}

/** Whether runs of `interval` make up missed periods: `month` and `day`, not an ISO duration (decision 0314). */
export const catchesUp = (interval: StatementInterval): boolean => interval.kind !== 'every';

/** At most this many missed periods of one account-asset are issued in one run: a month of days, years of months. */
export const CATCH_UP_PERIODS = 31;

/**
 * The periods of `interval` a run missed, oldest first: closed after `lastEnd` (the end of the account-asset's last
 * issued statement) and before `current` (the period the run issues) started, at most `max` of them, the latest.
 * A run is missed while the schedule is paused or Temporal is down past its catch-up window (decision 0314). None
 * when nothing was issued before (the first statement is the period just closed, as it always was), or for an ISO
 * duration (the tests' intervals, seconds apart: a paused schedule would owe hundreds of them).
 */
export function missedPeriods(
  interval: StatementInterval,
  lastEnd: Date | undefined,
  current: { start: Date; end: Date },
  max = CATCH_UP_PERIODS,
): Array<{ start: Date; end: Date }> {
  if (!lastEnd || !catchesUp(interval)) return [];
  const missed: Array<{ start: Date; end: Date }> = [];
  for (
    let p = closedPeriodBefore(interval, current.start);
    p.start >= lastEnd && missed.length < max;
    p = closedPeriodBefore(interval, p.start)
  ) {
    missed.unshift(p);
  }
  return missed;
}
