import type { EntitySchema } from '@mikro-orm/core';
import type { Em } from '../../db/orm';
import { entityFromRow } from '../../db/rows';
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
}

export interface Page<T> {
  data: T[];
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
  const conn = em.getConnection();
  const [fetched, counted] = await Promise.all([
    conn.execute(`select ${a}.* ${base} and ${window.where.sql} order by ${window.orderBy} limit ?`, [...baseParams, ...window.where.params, query.limit + 1]),
    conn.execute(`select count(*)::int as total ${base}`, baseParams),
  ]);
  const { rows, hasMoreInFetchDirection } = trimPage(fetched as Record<string, unknown>[], query.limit, window.reverseResults);
  // Read-only page: plain objects from the rows (db/rows.ts), no identity map or snapshots.
  const entities = rows.map((row) => entityFromRow(em, resource.entity, row));
  const cursors = pageCursors(entities, {
    hasMoreInFetchDirection,
    direction: query.direction,
    hadCursor: cursor !== undefined,
    secret: cursorSecret,
    sortOrder: query.sortOrder,
    getCreatedAt: (e) => ((e as { createdAt: Date }).createdAt).toISOString(),
    getId: (e) => (e as { id: string }).id,
  });
  return { data: entities, meta: { ...cursors, total: counted[0].total } };
}
