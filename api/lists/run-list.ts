import type { EntitySchema } from '@mikro-orm/core';
import type { Em } from '../../db/orm';
import { entityFromRow, selectColumns } from '../../db/rows';
import { queryRows, statementName } from '../../db/raw';
import { decodeCursor, SortOrder } from './cursor';
import type { FieldCatalogue } from './filter-fields';
import { parseFilters } from './filter-parser';
import { compileFilters } from './filter-sql';
import { keysetPage, pageCursors, PageDirection, trimPage } from './keyset';

/** The paging half of the list conventions: alone, the query of a list without filters. */
export const pageQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    cursor: { type: 'string', minLength: 1, maxLength: 1024 },
    direction: { type: 'string', enum: ['NEXT', 'PREVIOUS'], default: 'NEXT' },
    sortOrder: { type: 'string', enum: ['ASCENDING', 'DESCENDING'], default: 'DESCENDING' },
  },
} as const;

/** The list conventions of the spec, shared by every collection endpoint. */
export const listQuerySchema = {
  ...pageQuerySchema,
  properties: { ...pageQuerySchema.properties, filters: { type: 'string', maxLength: 4096 } },
} as const;

export interface ListQuery {
  limit: number;
  cursor?: string;
  direction: PageDirection;
  sortOrder: SortOrder;
  filters?: string;
}

export interface ListResource<T extends object> {
  entity: EntitySchema<T>;
  /** Table and alias, e.g. `operations o` (trusted, from code). */
  from: string;
  alias: string;
  catalogue: FieldCatalogue;
  /** Extra fixed condition from code, e.g. a parent id. */
  where?: { sql: string; params: unknown[] };
  /**
   * Extra columns read with each row in the same statement, e.g. an account's owners as JSON: `name` → SQL over
   * the row's alias (trusted, from code, no placeholders). They come back in `Page.extras`.
   */
  columns?: Record<string, string>;
}

export interface Page<T> {
  data: T[];
  /** The `columns` of the resource, one object per entry of `data`. */
  extras?: Array<Record<string, unknown>>;
  meta: { previousCursor: string | null; nextCursor: string | null; total: number };
}

/**
 * Runs one page of a list: the tenant condition comes from the EntityManager's own tenant scope (it is
 * not the caller's to remember), then the fixed condition, the client's filters, and the keyset window.
 */
export async function runList<T extends object>(em: Em, resource: ListResource<T>, query: ListQuery, cursorSecret: string): Promise<Page<T>> {
  const scope = em.getFilterParams<{ customerId?: string }>('tenant');
  if (!scope?.customerId) throw new Error('lists run in a customer scope only');
  const a = resource.alias;
  const filter = compileFilters(parseFilters(query.filters), resource.catalogue);
  const cursor = query.cursor ? decodeCursor(query.cursor, cursorSecret) : undefined;
  const window = keysetPage({ sortOrder: query.sortOrder, direction: query.direction, cursor, createdAtSql: `${a}.created_at`, idSql: `${a}.id` });
  const fixed = resource.where ?? { sql: 'true', params: [] };
  const base = `from ${resource.from} where ${a}.customer_id = ? and (${fixed.sql}) and ${filter.sql}`;
  const baseParams = [scope.customerId, ...fixed.params, ...filter.params];
  // The page and its total in one statement (the count is an uncorrelated subquery, evaluated once); a page past
  // the end has no row to carry the total, so it is counted on its own.
  const extra = Object.entries(resource.columns ?? {}).map(([name, sql]) => `, ${sql} as ${name}`).join('');
  const text =
    `select ${selectColumns(em, resource.entity, a)}${extra}, (select count(*)::int ${base}) as list_total ` +
    `${base} and ${window.where.sql} order by ${window.orderBy} limit ?`;
  const params = [...baseParams, ...baseParams, ...window.where.params, query.limit + 1];
  // Without filters the text is one of a few per resource (sort, direction, cursor or not): worth preparing.
  const fetched = await queryRows<Record<string, unknown>>(em, text, params, filter.params.length === 0 ? { prepared: statementName(text) } : {});
  const total = fetched.length > 0 ? (fetched[0].list_total as number) : (await queryRows<{ total: number }>(em, `select count(*)::int as total ${base}`, baseParams))[0].total;
  const { rows, hasMoreInFetchDirection } = trimPage(fetched, query.limit, window.reverseResults);
  // Read-only page: plain objects from the rows (db/rows.ts), no identity map or snapshots.
  const entities = rows.map((row) => entityFromRow(em, resource.entity, row));
  const names = Object.keys(resource.columns ?? {});
  const extras = names.length ? rows.map((row) => Object.fromEntries(names.map((name) => [name, row[name]]))) : undefined;
  const cursors = pageCursors(entities, {
    hasMoreInFetchDirection,
    direction: query.direction,
    hadCursor: cursor !== undefined,
    secret: cursorSecret,
    sortOrder: query.sortOrder,
    getCreatedAt: (e) => ((e as { createdAt: Date }).createdAt).toISOString(),
    getId: (e) => (e as { id: string }).id,
  });
  return { data: entities, extras, meta: { ...cursors, total } };
}
