import type { Em } from '../../db/orm';
import { MOVEMENT_DIRECTIONS, MovementDirection } from '../../db/entities/movement';
import { ASSETS } from '../../domain/assets';
import { Dec } from '../../domain/money';
import type { FieldCatalogue } from '../lists/filter-fields';
import { parseFilters } from '../lists/filter-parser';
import { compileFilters, CompiledFilter } from '../lists/filter-sql';
import { isoMicros, parsePeriod, ReportPeriod, splitPeriod } from './report-period';

const EQ_ONLY = ['eq'] as const;

// docs/decisions.md, Reports: the filterable fields, `eq` only. `asset` is the movement's asset.
export const REPORT_FIELDS: FieldCatalogue = {
  'account.id': { type: 'uuid', sql: 'm.account_id', ops: EQ_ONLY },
  asset: { type: 'enum', values: ASSETS, sql: 'm.asset', ops: EQ_ONLY },
  'tags.key': { type: 'string', jsonArray: 'm.tags', prop: 'key', ops: EQ_ONLY },
  'tags.value': { type: 'string', jsonArray: 'm.tags', prop: 'value', ops: EQ_ONLY },
};

// The same fields over the daily totals. Every movement of a totals row shares its account, asset and tag set,
// so a filter matches the whole row or none of it: filtering totals is exactly filtering their movements.
export const REPORT_DAY_FIELDS: FieldCatalogue = {
  'account.id': { type: 'uuid', sql: 'd.account_id', ops: EQ_ONLY },
  asset: { type: 'enum', values: ASSETS, sql: 'd.asset', ops: EQ_ONLY },
  'tags.key': { type: 'string', jsonArray: 'd.tags', prop: 'key', ops: EQ_ONLY },
  'tags.value': { type: 'string', jsonArray: 'd.tags', prop: 'value', ops: EQ_ONLY },
};

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
  const scope = em.getFilterParams<{ customerId?: string }>('tenant');
  if (!scope?.customerId) throw new Error('reports run in a customer scope only');
  const period = parsePeriod(query.periodStart, query.periodEnd);
  const ast = parseFilters(query.filters);
  const { sql, params } = reportSql(scope.customerId, period, compileFilters(ast, REPORT_FIELDS), compileFilters(ast, REPORT_DAY_FIELDS));
  const rows = (await em.getConnection().execute(sql, params)) as Array<{ asset: string; direction: MovementDirection; sum: string; count: string }>;
  const lines = rows
    .map((r) => ({ asset: r.asset, direction: r.direction, sum: new Dec(r.sum), count: Number(r.count) }))
    .sort((a, b) => compare(a.asset, b.asset) || MOVEMENT_DIRECTIONS.indexOf(a.direction) - MOVEMENT_DIRECTIONS.indexOf(b.direction));
  return { period, lines };
}

/**
 * The report statement. Exported for the benchmark, which also times `dayFilter` null: movements only, for the
 * whole window (the straightforward indexed version, without daily totals).
 */
export function reportSql(customerId: string, period: ReportPeriod, filter: CompiledFilter, dayFilter: CompiledFilter | null) {
  const split = dayFilter ? splitPeriod(period) : { days: null, edges: [{ from: isoMicros(period.start.micros), to: isoMicros(period.end.micros) }] };
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const edge of split.edges) {
    parts.push(
      `select m.asset, m.direction, sum(m.amount) as total, count(*) as n from movements m
       where m.customer_id = ? and m.completed_at >= ?::timestamptz and m.completed_at < ?::timestamptz and ${filter.sql}
       group by m.asset, m.direction`,
    );
    params.push(customerId, edge.from, edge.to, ...filter.params);
  }
  if (split.days && dayFilter) {
    parts.push(
      `select d.asset, d.direction, sum(d.sum) as total, sum(d.count) as n from movement_days d
       where d.customer_id = ? and d.day >= ?::date and d.day < ?::date and ${dayFilter.sql}
       group by d.asset, d.direction`,
    );
    params.push(customerId, split.days.from, split.days.to, ...dayFilter.params);
  }
  const sql = `select asset, direction, sum(total)::text as sum, sum(n)::text as count
    from (${parts.join(' union all ')}) t group by asset, direction`;
  return { sql, params };
}

// Asset codes are plain ASCII: compare code points, whatever the database's collation.
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
