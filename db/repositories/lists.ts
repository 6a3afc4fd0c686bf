// Pages of the collection endpoints (GET /api/accounts, /api/operations, ...): one hand-written statement per page,
// through db/raw.ts `queryRows` (straight through the driver outside a transaction, prepared when the text is one
// of the few a list without filters has; em.execute inside one). Lists are a hot path, where building and hydrating
// the same page through the ORM costs more than the statement. The rows come back as plain entity objects.
// Tenant: the customer is the EntityManager's scope (`tenantOf`), read here and nowhere else; a list never runs
// across customers. The resource's own fixed condition, the client's filter (db/lists/filter-sql.ts) and the keyset
// window (db/lists/keyset.ts) are added after it.
import type { EntitySchema } from '@mikro-orm/core';
import type { CursorPosition, FieldCatalogue, FilterNode, PageDirection, SortOrder } from '../../domain/list-filters';
import { compileFilters } from '../lists/filter-sql';
import { keysetPage, trimPage } from '../lists/keyset';
import { tenantOf, type Em } from '../orm';
import { queryRows, statementName } from '../raw';
import { entityFromRow, selectColumns } from '../rows';

/** What a list reads: its table, the fields a filter may name, and anything read with each row. From code only. */
export interface ListResource<T extends object> {
  entity: EntitySchema<T>;
  /** Table and alias, e.g. `operations o`. */
  from: string;
  alias: string;
  catalogue: FieldCatalogue;
  /** Extra fixed condition, e.g. a parent id. */
  where?: { sql: string; params: unknown[] };
  /**
   * Extra columns read with each row in the same statement, e.g. an account's owners as JSON: `name` → SQL over
   * the row's alias (no placeholders). They come back in `extras`, one object per row.
   */
  columns?: Record<string, string>;
}

/**
 * The list a cursor belongs to: the customer of the EntityManager's scope, the resource's table and the values of its
 * fixed condition (the subscription of a log list, the delivery of an attempt list). A cursor is signed with it
 * (lists/cursor.ts), so one issued for another customer, another list or another parent does not verify here.
 */
export function listScope<T extends object>(em: Em, resource: ListResource<T>): string {
  return cursorScope(tenantOf(em), resource);
}

/** `listScope` for a customer named outright (the list benchmark computes cursors of its own). */
export function cursorScope<T extends object>(customerId: string, resource: ListResource<T>): string {
  return [customerId, resource.from, ...(resource.where?.params ?? []).map(String)].join('\n');
}

/** A page asked for, once the API has parsed the query string and verified the cursor. */
export interface PageRequest {
  filter: FilterNode | null;
  cursor?: CursorPosition;
  limit: number;
  direction: PageDirection;
  sortOrder: SortOrder;
}

export interface PageRows<T> {
  /** The page, in the list's sort order. */
  rows: T[];
  extras?: Array<Record<string, unknown>>;
  /** More rows lie beyond the page in the direction of travel. */
  hasMoreInFetchDirection: boolean;
  total: number;
}

/** One page of the resource in the EntityManager's customer scope, and the number of rows the filter matches. */
export async function readListPage<T extends object>(
  em: Em,
  resource: ListResource<T>,
  request: PageRequest,
): Promise<PageRows<T>> {
  const a = resource.alias;
  const filter = compileFilters(request.filter, resource.catalogue);
  const window = keysetPage({ ...request, createdAtSql: `${a}.created_at`, idSql: `${a}.id` });
  const fixed = resource.where ?? { sql: 'true', params: [] };
  const base = `from ${resource.from} where ${a}.customer_id = ? and (${fixed.sql}) and ${filter.sql}`;
  const baseParams = [tenantOf(em), ...fixed.params, ...filter.params];
  // The page and its total in one statement (the count is an uncorrelated subquery, evaluated once); a page past
  // the end has no row to carry the total, so it is counted on its own.
  const extra = Object.entries(resource.columns ?? {})
    .map(([name, sql]) => `, ${sql} as ${name}`)
    .join('');
  const text =
    `select ${selectColumns(em, resource.entity, a)}${extra}, (select count(*)::int ${base}) as list_total ` +
    `${base} and ${window.where.sql} order by ${window.orderBy} limit ?`;
  const params = [...baseParams, ...baseParams, ...window.where.params, request.limit + 1];
  // Without filters the text is one of a few per resource (sort, direction, cursor or not): worth preparing.
  const prepared = filter.params.length === 0 ? { prepared: statementName(text) } : {};
  const fetched = await queryRows<Record<string, unknown>>(em, text, params, prepared);
  const total =
    fetched.length > 0
      ? (fetched[0].list_total as number)
      : (await queryRows<{ total: number }>(em, `select count(*)::int as total ${base}`, baseParams))[0].total;
  const { rows, hasMoreInFetchDirection } = trimPage(fetched, request.limit, window.reverseResults);
  const names = Object.keys(resource.columns ?? {});
  return {
    // Read-only page: plain objects from the rows (db/rows.ts), no identity map or snapshots.
    rows: rows.map((row) => entityFromRow(em, resource.entity, row)),
    extras: names.length ? rows.map((row) => Object.fromEntries(names.map((name) => [name, row[name]]))) : undefined,
    hasMoreInFetchDirection,
    total,
  };
}
