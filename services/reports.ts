import type { Em } from '../db/orm';
import { MOVEMENT_DIRECTIONS, MovementDirection } from '../db/entities/movement';
import { reportTotals } from '../db/repositories/reports';
import { Dec } from '../domain/money';
import { parsePeriod, ReportPeriod, toMillisecondWindow } from '../domain/report-period';
import { parseFilters } from '../lists/filter-parser';

export interface ReportQuery {
  periodStart?: string;
  periodEnd?: string;
  filters?: string;
}

/** One asset and direction of a report: the exact sum (a decimal string) and the number of movements. */
export interface ReportLine {
  asset: string;
  direction: MovementDirection;
  sum: Dec;
  count: number;
}

export interface Report {
  period: ReportPeriod;
  /** Sorted by asset code, INFLOW before OUTFLOW; only lines with at least one movement. */
  lines: ReportLine[];
}

/**
 * Settled inflows and outflows per asset of the EntityManager's customer over `[periodStart, periodEnd)`.
 * One SQL statement, hence one snapshot: both sides of a transfer, written in one transaction, appear together
 * or not at all. Whole UTC days are summed from the daily totals, the partial days at the edges from the
 * movements. Sums are Postgres numeric: exact.
 */
export async function getReport(em: Em, query: ReportQuery): Promise<Report> {
  const period = toMillisecondWindow(parsePeriod(query.periodStart, query.periodEnd));
  const rows = await reportTotals(em, period, parseFilters(query.filters));
  const lines = rows
    .map((r) => ({ asset: r.asset, direction: r.direction, sum: new Dec(r.sum), count: Number(r.count) }))
    .sort(
      (a, b) =>
        compare(a.asset, b.asset) ||
        MOVEMENT_DIRECTIONS.indexOf(a.direction) - MOVEMENT_DIRECTIONS.indexOf(b.direction),
    );
  return { period, lines };
}

// Asset codes are plain ASCII: compare code points, whatever the database's collation.
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
