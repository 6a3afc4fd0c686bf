// The list-page copy: an API process keeps the JSON of the unfiltered account list pages it served, and answers a
// repeated request from its copy after one small statement says the list's version has not changed since
// (db/repositories/list-versions.ts; the versions are kept by triggers, Migration20261123080000ListVersions).
// Postgres is reached only through that repository. Tenant: a copy is keyed by the EntityManager's customer
// (`tenantOf`), the scope every statement of the page and of its version is read in. `LIST_CACHE_MB=0` turns it off.
import { tenantOf, type Em } from '../orm';
import { currentListVersion, VersionedList } from '../repositories/list-versions';

/** What names a page of a list: its paging and filter parameters as the client sent them. */
export interface PageQuery {
  limit: number;
  cursor?: string;
  direction: string;
  sortOrder: string;
  filters?: string;
}

/** A page as it is sent (JSON bytes), and the version of its list it was read at. */
interface CachedPage {
  version: string;
  body: Buffer;
}

// A key is a few hundred bytes at most (a cursor is at most 1 KiB): counted with its page, as UTF-16.
const keyBytes = (key: string) => key.length * 2;

/**
 * This process's copies of recently served list pages, least recently used dropped first once they hold more
 * than `maxBytes`. A copy is never trusted on its own: `servePage` answers from it only after the database says
 * the list's version is still the one the copy was read at (decision 0037).
 */
export class PageCache {
  private readonly pages = new Map<string, CachedPage>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): CachedPage | undefined {
    const page = this.pages.get(key);
    if (page) {
      // Most recently used last: Map keeps insertion order.
      this.pages.delete(key);
      this.pages.set(key, page);
    }
    return page;
  }

  set(key: string, page: CachedPage): void {
    this.delete(key);
    const size = keyBytes(key) + page.body.length;
    if (size > this.maxBytes) return;
    this.pages.set(key, page);
    this.bytes += size;
    for (const [oldest, old] of this.pages) {
      if (this.bytes <= this.maxBytes) break;
      this.pages.delete(oldest);
      this.bytes -= keyBytes(oldest) + old.body.length;
    }
  }

  delete(key: string): void {
    const page = this.pages.get(key);
    if (!page) return;
    this.pages.delete(key);
    this.bytes -= keyBytes(key) + page.body.length;
  }

  /** Bytes held, keys included (tests, metrics). */
  get size(): number {
    return this.bytes;
  }
}

/** A page read from the database: what is sent, and the list's version in the same statement (null: none). */
export interface FreshPage {
  body: object;
  version: string | null;
}

/**
 * A page of `list` for this query, as JSON bytes. Without filters, a copy kept from an earlier request answers
 * if the list's version has not changed since (one small statement instead of the page's); otherwise the page
 * is read, and kept when it was read at a version. Filtered queries are read every time: their texts are the
 * client's, and a copy of each would only crowd out the pages that are asked for again and again.
 */
export async function servePage(
  em: Em,
  cache: PageCache,
  list: VersionedList,
  query: PageQuery,
  read: () => Promise<FreshPage>,
  served: (source: 'copy' | 'read') => void = () => {},
): Promise<Buffer> {
  if (query.filters !== undefined) return Buffer.from(JSON.stringify((await read()).body));
  // The customer comes from the EntityManager's scope, like every condition of the page's own statement.
  const key = [tenantOf(em), list, query.limit, query.direction, query.sortOrder, query.cursor ?? ''].join('\n');
  const kept = cache.get(key);
  if (kept && (await currentListVersion(em, list)) === kept.version) {
    served('copy');
    return kept.body;
  }
  const fresh = await read();
  const body = Buffer.from(JSON.stringify(fresh.body));
  if (fresh.version !== null) cache.set(key, { version: fresh.version, body });
  else cache.delete(key);
  served('read');
  return body;
}
