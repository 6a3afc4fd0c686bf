// The cursors handed back with a page of a keyset list: the table of cases is in db/lists/keyset.ts, which builds
// the window they point into.
import type { PageDirection } from '../domain/list-filters';
import { CursorSecret, SortOrder, encodeCursor } from './cursor';

export type { PageDirection };

export interface PageCursorOptions<R> {
  hasMoreInFetchDirection: boolean;
  direction: PageDirection;
  hadCursor: boolean;
  secret: CursorSecret;
  /** The list the cursors are for (db/repositories/lists.ts `listScope`): they page no other. */
  scope?: string;
  sortOrder: SortOrder;
  /** The fingerprint of the page's filters (lists/filter-fingerprint.ts): the cursors page no other filters. */
  filters: string;
  /** createdAt with full database precision (microseconds), as an ISO string. */
  getCreatedAt: (row: R) => string;
  getId: (row: R) => string;
}

/** `rows` is the page as returned to the client (trimmed, in sort order); see the table above. */
export function pageCursors<R>(
  rows: readonly R[],
  opts: PageCursorOptions<R>,
): { previousCursor: string | null; nextCursor: string | null } {
  if (rows.length === 0) return { previousCursor: null, nextCursor: null };
  const at = (row: R): string =>
    encodeCursor(
      { createdAt: opts.getCreatedAt(row), id: opts.getId(row), sortOrder: opts.sortOrder, filters: opts.filters },
      opts.secret,
      opts.scope,
    );
  const first = rows[0];
  const last = rows[rows.length - 1];
  // Mirrors keysetPage: without a cursor the request was for the first page, whatever direction.
  if (opts.direction === 'NEXT' || !opts.hadCursor) {
    return {
      previousCursor: opts.hadCursor ? at(first) : null,
      nextCursor: opts.hasMoreInFetchDirection ? at(last) : null,
    };
  }
  return {
    previousCursor: opts.hasMoreInFetchDirection ? at(first) : null,
    nextCursor: at(last),
  };
}
