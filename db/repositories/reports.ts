// Reports (tables `movements`, `movement_days`): one hand-written aggregate statement, through the EntityManager's
// connection (`em.execute`). Its shape (a union of the partial days' movements and the whole days' totals, summed
// once) has no ORM form worth reading. Tenant: the customer comes from the EntityManager's scope (`tenantOf`), here
// only; `reportSql` takes it explicitly for the benchmark, which times the statement itself.
import { MovementDirection } from '../entities/movement';
import { ASSETS } from '../../domain/assets';
import type { FieldCatalogue, FilterNode } from '../../domain/list-filters';
import { isoMicros, ReportPeriod, splitPeriod } from '../../domain/report-period';
import { compileFilters, CompiledFilter } from '../lists/filter-sql';
import { tenantOf, type Em } from '../orm';

const EQ_ONLY = ['eq'] as const;

// Decision 0031: the filterable fields, `eq` only. `asset` is the movement's asset.
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

/** One asset and direction: the exact sum (Postgres numeric, as text) and the number of movements. */
export interface ReportTotal {
  asset: string;
  direction: MovementDirection;
  sum: string;
  count: string;
}

/**
 * Settled movements of the EntityManager's customer over the period, summed per asset and direction, for the
 * movements the filter matches (checked against REPORT_FIELDS: INVALID_FILTER otherwise). One statement, hence
 * one snapshot.
 */
export async function reportTotals(em: Em, period: ReportPeriod, filter: FilterNode | null): Promise<ReportTotal[]> {
  const movementFilter = compileFilters(filter, REPORT_FIELDS);
  const { sql, params } = reportSql(tenantOf(em), period, movementFilter, compileFilters(filter, REPORT_DAY_FIELDS));
  return (await em.getConnection().execute(sql, params)) as ReportTotal[];
}

/**
 * The report statement. Exported for the benchmark, which also times `dayFilter` null: movements only, for the
 * whole window (the straightforward indexed version, without daily totals).
 */
export function reportSql(
  customerId: string,
  period: ReportPeriod,
  filter: CompiledFilter,
  dayFilter: CompiledFilter | null,
) {
  const split = dayFilter
    ? splitPeriod(period)
    : { days: null, edges: [{ from: isoMicros(period.start.micros), to: isoMicros(period.end.micros) }] };
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const edge of split.edges) {
    parts.push(
      `select m.asset, m.direction, sum(m.amount) as total, count(*) as n from movements m
       where m.customer_id = ? and m.completed_at >= ?::timestamptz and m.completed_at < ?::timestamptz
         and ${filter.sql}
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
