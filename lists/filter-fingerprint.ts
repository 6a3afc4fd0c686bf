// What a cursor remembers of the filters its page was asked with (decision 0275): a position is a place in one
// filtered set, and read against another it pages a set the client never asked for.
import { createHash } from 'node:crypto';
import type { FilterNode } from '../domain/list-filters';

/**
 * A short digest of the parsed filter, so spellings the parser reads alike (`a[eq]=x`, `a[eq]="x"`) are the same
 * filters, and a 4 KiB filter still fits a cursor. No filter has its own digest, so a cursor of the unfiltered list
 * does not page a filtered one either.
 */
export function filterFingerprint(filter: FilterNode | null): string {
  return createHash('sha256').update(JSON.stringify(filter)).digest('base64url').slice(0, 22);
}
