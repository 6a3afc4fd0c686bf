// Keyset pagination on (createdAt, id).
//
// Semantics
// - A list has a sort order (ASCENDING or DESCENDING by createdAt, ties broken by id in the same
//   direction). Every page is returned in that order, whichever way the client is moving.
// - The client moves NEXT (further along the sort order) or PREVIOUS (back towards its start)
//   from a cursor, which is the position of a row on the page it already has. Without a cursor
//   the request is for the first page, and PREVIOUS is treated as NEXT.
// - To move, we fetch `limit + 1` rows strictly beyond the cursor in the direction of travel;
//   the extra row only tells us whether more rows exist that way, and is dropped (trimPage).
//   Moving PREVIOUS means fetching in the opposite order (the rows nearest the cursor come first)
//   and reversing the fetched rows, so the page still reads in the list's sort order.
// - Cursors handed back with a page (pageCursors, lists/page-cursors.ts):
//     empty page                → both null
//     NEXT (or first page)      → nextCursor = last row if more rows follow, else null;
//                                 previousCursor = first row if the request had a cursor (we
//                                 came from somewhere, so there is something before), else null
//     PREVIOUS                  → previousCursor = first row if more rows precede, else null;
//                                 nextCursor = last row (we came back from a later page, so
//                                 there is always one after)
// - The row comparison `(createdAt, id) < (?, ?)` matches a composite index on the same columns
//   and gives a total order even when many rows share a createdAt.
//
// This half builds the window's SQL and trims what it fetched; the cursors handed back are lists/page-cursors.ts.
import { CambioError } from '../../domain/errors';
import type { CursorPosition, PageDirection, SortOrder } from '../../domain/list-filters';

export interface KeysetOptions {
  sortOrder: SortOrder;
  direction: PageDirection;
  cursor?: CursorPosition;
  /** Trusted SQL expressions (from code, never from the request) for the two key columns. */
  createdAtSql: string;
  idSql: string;
}

export interface KeysetPage {
  where: { sql: string; params: unknown[] };
  orderBy: string;
  /** True when the fetched rows come back in the opposite order and must be reversed. */
  reverseResults: boolean;
}

export function keysetPage(opts: KeysetOptions): KeysetPage {
  const { sortOrder, cursor, createdAtSql, idSql } = opts;
  const direction = cursor === undefined ? 'NEXT' : opts.direction;
  // A cursor is a position in one ordering; applied to the other it would select a wrong slice.
  if (cursor !== undefined && cursor.sortOrder !== sortOrder) {
    throw new CambioError(
      'INVALID_CURSOR',
      `Invalid cursor: it was issued for ${cursor.sortOrder} order, not ${sortOrder}`,
    );
  }
  const ascending = sortOrder === 'ASCENDING';
  // Walking backwards through an ascending list is walking forwards through a descending one.
  const fetchAscending = direction === 'NEXT' ? ascending : !ascending;
  const dir = fetchAscending ? 'ASC' : 'DESC';
  const orderBy = `${createdAtSql} ${dir}, ${idSql} ${dir}`;
  const reverseResults = direction === 'PREVIOUS';
  if (cursor === undefined) return { where: { sql: 'true', params: [] }, orderBy, reverseResults };
  const cmp = fetchAscending ? '>' : '<';
  return {
    // createdAt is cast from its string form so the microseconds survive (see cursor.ts).
    where: { sql: `(${createdAtSql}, ${idSql}) ${cmp} (?::timestamptz, ?)`, params: [cursor.createdAt, cursor.id] },
    orderBy,
    reverseResults,
  };
}

/**
 * Turns the `limit + 1` rows fetched in the order keysetPage asked for into the page to return,
 * in the list's sort order, and says whether more rows exist in the direction of travel.
 */
export function trimPage<R>(
  fetched: readonly R[],
  limit: number,
  reverseResults: boolean,
): { rows: R[]; hasMoreInFetchDirection: boolean } {
  const hasMoreInFetchDirection = fetched.length > limit;
  const rows = fetched.slice(0, limit);
  if (reverseResults) rows.reverse();
  return { rows, hasMoreInFetchDirection };
}
