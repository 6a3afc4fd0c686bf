// List versions (table `list_versions`, written by triggers only): one small prepared statement straight through
// the driver (db/raw.ts `rawQuery`), read before every unfiltered account page. Tenant: the customer is the
// EntityManager's scope (`tenantOf`); the version column reads the row's own customer.
import { tenantOf, type Em } from '../orm';
import { numbered, rawQuery } from '../raw';

// The version of a customer's list (Migration20261123080000ListVersions): triggers give it a new value, at COMMIT,
// in every transaction that changes a row the list shows. The lists that have one:
export type VersionedList = 'accounts';

const CURRENT_VERSION = numbered('select version from list_versions where customer_id = ? and list = ?');

/**
 * The list's version now, in the EntityManager's customer scope; null when it has none (nothing of it was ever
 * written). One small prepared statement, outside any transaction.
 */
export async function currentListVersion(em: Em, list: VersionedList): Promise<string | null> {
  const rows = await rawQuery<{ version: string }>(em, CURRENT_VERSION, [tenantOf(em), list], {
    prepared: 'cambio-list-version',
  });
  return rows.length ? rows[0].version : null;
}

/**
 * A column that reads the list's version beside a page's rows (a list's extra `columns`, over the row alias), so
 * the page and the version it was read at come from one statement, hence one snapshot.
 */
export function listVersionColumn(list: VersionedList, alias: string): string {
  return `(select v.version from list_versions v where v.customer_id = ${alias}.customer_id and v.list = '${list}')`;
}
