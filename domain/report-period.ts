// The report window `[periodStart, periodEnd)` (decision 0031) and how it splits into whole UTC days,
// answered from the daily totals, and the partial days at its edges, answered from the movements themselves.
import { CambioError } from './errors';
import { isIsoTimestamp } from './list-filters';

/**
 * An instant with microsecond precision (Postgres' own), so no client digit is silently dropped (a report then reads
 * its window to the millisecond above, which selects the same movements: `toMillisecondWindow`).
 */
export interface Instant {
  /** Microseconds since the Unix epoch. */
  micros: bigint;
  /** What the `period` of the response echoes: `toISOString()` of the instant (milliseconds). */
  echo: string;
}

export interface ReportPeriod {
  start: Instant;
  end: Instant;
}

const DAY_MICROS = 86_400_000_000n;
// Z only, fractional seconds optional (up to Postgres' microseconds).
const UTC_TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.(\d{1,6}))?Z$/;

/** Ajv schema of a period bound: the route rejects most malformed values, parsePeriod the rest (Feb 30). */
export const periodBoundSchema = {
  type: 'string',
  format: 'date-time',
  pattern: UTC_TIMESTAMP_RE.source,
  maxLength: 40,
  description:
    'ISO 8601 UTC timestamp with a trailing Z, e.g. 2026-11-01T00:00:00Z (fractional seconds optional, at ' +
    'most 6 digits)',
} as const;

/**
 * Parses both bounds. Missing or malformed: VALIDATION_ERROR naming the parameter; `periodEnd` not after
 * `periodStart` (compared to the microsecond): INVALID_PERIOD.
 */
export function parsePeriod(periodStart: unknown, periodEnd: unknown): ReportPeriod {
  const start = parseInstant('periodStart', periodStart);
  const end = parseInstant('periodEnd', periodEnd);
  if (end.micros <= start.micros) {
    throw new CambioError('INVALID_PERIOD', 'periodEnd must be after periodStart', { periodStart, periodEnd });
  }
  return { start, end };
}

export function parseInstant(name: string, value: unknown, path = `/query/${name}`): Instant {
  if (value === undefined || value === null || value === '') {
    throw new CambioError('VALIDATION_ERROR', `${path} is required`, { errors: [{ path, message: 'is required' }] });
  }
  const m = typeof value === 'string' ? UTC_TIMESTAMP_RE.exec(value) : null;
  if (m === null || !isIsoTimestamp(value as string)) {
    const message = 'must be an ISO 8601 UTC timestamp with a trailing Z, such as 2026-11-01T00:00:00Z';
    throw new CambioError('VALIDATION_ERROR', `${path} ${message}`, { errors: [{ path, message }] });
  }
  // Date keeps milliseconds; the digits past them are added back so the window is exactly what was sent.
  const date = new Date(value as string);
  const subMillis = BigInt((m[2] ?? '').padEnd(6, '0').slice(3));
  return { micros: BigInt(date.getTime()) * 1000n + subMillis, echo: date.toISOString() };
}

/**
 * The window a report reads: each bound rounded up to the millisecond. A movement's moment is stored to the millisecond
 * (`movements.completed_at`), so a bound between two milliseconds selects exactly what the next millisecond selects,
 * and the `period` the response echoes (`toISOString()`, milliseconds, as the spec says) is then the window read: a
 * start of `.794001` read to the microsecond but echoed `.794` named a window its totals left `.794` out of
 * (decision 0352).
 */
export function toMillisecondWindow(period: ReportPeriod): ReportPeriod {
  const up = ({ micros }: Instant): Instant => {
    const below = ((micros % 1000n) + 1000n) % 1000n; // microseconds past the millisecond below (before 1970 too)
    const ms = (micros - below) / 1000n + (below === 0n ? 0n : 1n);
    return { micros: ms * 1000n, echo: new Date(Number(ms)).toISOString() };
  };
  return { start: up(period.start), end: up(period.end) };
}

/** A half-open range of instants `[from, to)`, as timestamptz literals. */
export interface InstantRange {
  from: string;
  to: string;
}

/** A half-open range of UTC days `[from, to)`, as date literals. */
export interface DayRange {
  from: string;
  to: string;
}

export interface PeriodSplit {
  /** Whole UTC days inside the window, or null when it covers none. */
  days: DayRange | null;
  /** The rest of the window, at most two pieces (before the first and after the last whole day). */
  edges: InstantRange[];
}

/** Splits the window so the whole days come from daily totals and only the edges from single movements. */
export function splitPeriod(p: ReportPeriod): PeriodSplit {
  const firstDay = ceilDiv(p.start.micros, DAY_MICROS);
  const endDay = floorDiv(p.end.micros, DAY_MICROS);
  if (firstDay >= endDay)
    return { days: null, edges: [{ from: isoMicros(p.start.micros), to: isoMicros(p.end.micros) }] };
  const edges: InstantRange[] = [];
  if (p.start.micros < firstDay * DAY_MICROS)
    edges.push({ from: isoMicros(p.start.micros), to: isoMicros(firstDay * DAY_MICROS) });
  if (endDay * DAY_MICROS < p.end.micros)
    edges.push({ from: isoMicros(endDay * DAY_MICROS), to: isoMicros(p.end.micros) });
  return { days: { from: isoDay(firstDay), to: isoDay(endDay) }, edges };
}

// BigInt division truncates towards zero; instants before 1970 are negative, so round explicitly.
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return q * b > a ? q - 1n : q;
}

function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return q * b < a ? q + 1n : q;
}

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ`: every microsecond kept. */
export function isoMicros(micros: bigint): string {
  const millis = floorDiv(micros, 1000n);
  const sub = micros - millis * 1000n;
  return new Date(Number(millis)).toISOString().replace('Z', `${sub.toString().padStart(3, '0')}Z`);
}

function isoDay(day: bigint): string {
  return new Date(Number(day * 86_400_000n)).toISOString().slice(0, 10);
}
