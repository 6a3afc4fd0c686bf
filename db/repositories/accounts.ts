// Accounts (tables `accounts`, `ubos`, `account_documents`): entities, reads by id and changes go through the ORM
// (its tenant filter) in the services. Here are a new account and the account's hot reads, hand-written: the view's
// UBOs and documents as JSON columns (one small prepared statement beside the account's ORM read; db/raw.ts
// `queryRows`), and the list's resource, whose page reads the same columns with its rows (db/repositories/lists.ts).
// Tenant: a new account, the parts statement and the owner's tax id look-up take the customer from the
// EntityManager's scope (`tenantOf`); the list adds it in lists.ts the same way. The operators' reads across customers
// (accounts under review, a document's content) take a system-scoped EntityManager and say so.
import type { Account, AccountDocument, Ubo } from '../entities/account';
import { ACCOUNT_STATUSES, AccountDocumentSchema, AccountSchema, UboSchema } from '../entities/account';
import type { FieldCatalogue } from '../../domain/list-filters';
import { tenantOf, type Em } from '../orm';
import { queryRows, statementName } from '../raw';
import { entityFromRow } from '../rows';
import type { ListResource } from './lists';
import { listVersionColumn } from './list-versions';

/** What an account view shows of a document: everything but its content. */
export type DocumentSummary = Omit<AccountDocument, 'content'>;

export interface AccountParts {
  ubos: Ubo[];
  documents: DocumentSummary[];
}

/** A new account of the EntityManager's customer, persisted at the next flush. */
export function newAccount(em: Em, fields: Omit<Account, 'customerId'>): Account {
  return em.create(AccountSchema, { ...fields, customerId: tenantOf(em) });
}

/**
 * Filterable fields of GET /api/accounts (../shared/spec/decisions.md, "Lists and filters"); the allowlist reaching
 * SQL.
 */
export const ACCOUNT_FIELDS: FieldCatalogue = {
  'currentState.status': { type: 'enum', values: ACCOUNT_STATUSES, sql: 'a.status' },
  'owner.legalName': { type: 'string', sql: 'a.legal_name' },
  createdAt: { type: 'timestamp', sql: 'a.created_at' },
  'tags.key': { type: 'string', jsonArray: 'a.tags', prop: 'key' },
  'tags.value': { type: 'string', jsonArray: 'a.tags', prop: 'value' },
  'assets.asset': { type: 'string', jsonArray: 'a.assets', prop: 'asset' },
};

const DOCUMENT_SUMMARY_COLUMNS =
  'id, account_id, customer_id, document_type, ubo_id, file_name, content_type, size_bytes, status, reason, created_at';

// An account's UBOs and documents, both in creation order, as JSON columns over the account row `a`.
const PARTS = {
  ubos_json:
    `(select coalesce(json_agg(u order by u.created_at, u.id), '[]') from ubos u ` +
    `where u.account_id = a.id and u.customer_id = a.customer_id)`,
  documents_json:
    `(select coalesce(json_agg(d order by d.created_at, d.id), '[]') from ` +
    `(select ${DOCUMENT_SUMMARY_COLUMNS} from account_documents ` +
    `where account_id = a.id and customer_id = a.customer_id) d)`,
};
type PartsRow = { ubos_json: Record<string, unknown>[]; documents_json: Record<string, unknown>[] };

const PARTS_OF_ONE =
  `select ${Object.entries(PARTS)
    .map(([name, sql]) => `${sql} as ${name}`)
    .join(', ')} ` + `from (values (?::uuid, ?::uuid)) a (id, customer_id)`;

function partsOf(em: Em, row: PartsRow): AccountParts {
  return {
    ubos: row.ubos_json.map((u) => entityFromRow(em, UboSchema, u)),
    documents: row.documents_json.map((d) => entityFromRow(em, AccountDocumentSchema, d)),
  };
}

/** The UBOs and documents of an account of the EntityManager's customer, read-only, for its view. */
export async function accountParts(em: Em, accountId: string): Promise<AccountParts> {
  const [row] = await queryRows<PartsRow>(em, PARTS_OF_ONE, [accountId, tenantOf(em)], {
    prepared: statementName(PARTS_OF_ONE),
  });
  return partsOf(em, row);
}

/** GET /api/accounts: each row with its parts, and the list's version read in the same statement. */
export const ACCOUNT_LIST: ListResource<Account> = {
  entity: AccountSchema,
  from: 'accounts a',
  alias: 'a',
  catalogue: ACCOUNT_FIELDS,
  columns: { ...PARTS, list_version: listVersionColumn('accounts', 'a') },
};

/** The parts and the list version a row of ACCOUNT_LIST carries (its `extras`). */
export function listRowParts(em: Em, extras: Record<string, unknown>): AccountParts & { listVersion: string | null } {
  return { ...partsOf(em, extras as PartsRow), listVersion: (extras.list_version as string | null) ?? null };
}

/** An account's owner's tax id in SQL, as `bareTaxId` writes it (domain/tax-id.ts): digits and letters, upper case. */
export const ownerBareTaxId = (account: string): string =>
  `upper(regexp_replace(${account}.owner -> 'taxId' ->> 'value', '[^0-9A-Za-z]', '', 'g'))`;

/**
 * Whether an ACTIVE account of the EntityManager's customer is owned by `taxId` (digits and letters, upper case: an
 * owner's tax id is compared without its punctuation, as a deposit's `payerTaxId` is written). Only an account a
 * review approved makes its customer the tax id's owner, as for the TEDs it matches (decision 0179). Plain SQL: the
 * ORM's JSON conditions cannot strip the punctuation an owner's tax id was entered with.
 */
export async function ownsAccountOfTaxId(em: Em, taxId: string): Promise<boolean> {
  const rows = await em.execute<{ found: number }[]>(
    `select 1 as found from accounts a
     where a.customer_id = ?
       and ${ownerBareTaxId('a')} = ? and a.status = 'ACTIVE'
     limit 1`,
    [tenantOf(em), taxId],
  );
  return rows.length > 0;
}

/**
 * For operators (a system-scoped EntityManager): the accounts waiting for a review decision (UNDER_REVIEW), across
 * customers, the longest-waiting first (by their last change, which for such an account is its submission or a tag),
 * at most `limit` (decision 0351).
 */
export function accountsUnderReview(systemScoped: Em, limit = 1000): Promise<Account[]> {
  return systemScoped.find(
    AccountSchema,
    { status: 'UNDER_REVIEW' },
    { orderBy: { updatedAt: 'asc', id: 'asc' }, limit },
  );
}

/** For operators (a system-scoped EntityManager): an onboarding document with its content, whichever its customer. */
export function documentOfAnyCustomer(systemScoped: Em, documentId: string): Promise<AccountDocument | null> {
  // The content is a lazy property: loaded only when named.
  return systemScoped.findOne(AccountDocumentSchema, { id: documentId }, { populate: ['content'] });
}
