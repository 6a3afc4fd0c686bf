import type { Em } from '../db/orm';
import { ListResource, listScope, readListPage } from '../db/repositories/lists';
import { decodeCursor, SortOrder } from './cursor';
import { validateFilters } from '../domain/list-filters';
import { parseFilters } from './filter-parser';
import { filterFingerprint } from './filter-fingerprint';
import { CambioError } from '../domain/errors';
import { pageCursors, PageDirection } from './page-cursors';

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

export interface Page<T> {
  data: T[];
  /** The `columns` of the resource, one object per entry of `data`. */
  extras?: Array<Record<string, unknown>>;
  meta: { previousCursor: string | null; nextCursor: string | null; total: number };
}

/**
 * Runs one page of a list: the query string is parsed and the cursor verified here, the statement (its tenant
 * condition from the EntityManager's scope, the fixed condition, the filter, the keyset window) is
 * db/repositories/lists.ts; the cursors handed back are signed here.
 */
export async function runList<T extends object>(
  em: Em,
  resource: ListResource<T>,
  query: ListQuery,
  cursorSecret: string,
): Promise<Page<T>> {
  const filter = parseFilters(query.filters);
  validateFilters(filter, resource.catalogue);
  // A cursor pages the list that issued it only: another customer's, another list's, another parent's is 400.
  const scope = listScope(em, resource);
  const cursor = query.cursor ? decodeCursor(query.cursor, cursorSecret, scope) : undefined;
  // ... and with the filters it was issued for: from the same position another filter pages another set.
  const filters = filterFingerprint(filter);
  if (cursor?.filters !== undefined && cursor.filters !== filters) {
    throw new CambioError(
      'INVALID_CURSOR',
      'Invalid cursor: it was issued for other filters; page with the filters the first page was asked with',
    );
  }
  const { limit, direction, sortOrder } = query;
  const page = await readListPage(em, resource, { filter, cursor, limit, direction, sortOrder });
  const cursors = pageCursors(page.rows, {
    hasMoreInFetchDirection: page.hasMoreInFetchDirection,
    direction,
    hadCursor: cursor !== undefined,
    secret: cursorSecret,
    scope,
    sortOrder,
    filters,
    getCreatedAt: (e) => (e as { createdAt: Date }).createdAt.toISOString(),
    getId: (e) => (e as { id: string }).id,
  });
  return { data: page.rows, extras: page.extras, meta: { ...cursors, total: page.total } };
}
