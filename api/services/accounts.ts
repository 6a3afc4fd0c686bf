// Accounts: create, read, list and tag. Shared by the routes and the CLI; the EntityManager decides the scope
// (a request's tenant em sees one customer, so another customer's account is simply not found).
import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import { Em, tenantOf } from '../../db/orm';
import { entityFromRow } from '../../db/rows';
import { queryRows, statementName } from '../../db/raw';
import { inTransaction } from '../../db/transaction';
import { Account, AccountDocumentSchema, AccountSchema, AccountTag, CompanyOwner, Ubo, UboSchema } from '../../db/entities/account';
import { isValidTaxId, normalizeTaxId, TaxIdType } from '../../domain/tax-id';
import { initialStates } from '../../domain/states';
import type { FieldCatalogue } from '../lists/filter-fields';
import { ListQuery, Page, runList } from '../lists/run-list';
import { PageCache, servePage } from '../lists/page-cache';
import { listVersionColumn } from '../../db/repositories/list-versions';
import { notFound, validationError } from '../errors';
import { AccountView, DocumentSummary, presentAccount } from '../presenters/account';
import { ACCOUNT_STATUSES } from '../schemas/accounts';

type Address = Record<string, string>;
export interface TaxIdInput {
  value: string;
  type: TaxIdType;
}

export interface CreateAccountInput {
  assets: Array<{ code: string; isVirtual: boolean }>;
  owner: { type: 'COMPANY'; legalName: string; taxId: TaxIdInput; industry: string; incorporateDate: string; address: Address };
}

/** Filterable fields of GET /api/accounts (docs/decisions.md, "Lists and filters"); the allowlist reaching SQL. */
export const ACCOUNT_FIELDS: FieldCatalogue = {
  'currentState.status': { type: 'enum', values: ACCOUNT_STATUSES, sql: 'a.status' },
  'owner.legalName': { type: 'string', sql: 'a.legal_name' },
  createdAt: { type: 'timestamp', sql: 'a.created_at' },
  'tags.key': { type: 'string', jsonArray: 'a.tags', prop: 'key' },
  'tags.value': { type: 'string', jsonArray: 'a.tags', prop: 'value' },
  'assets.asset': { type: 'string', jsonArray: 'a.assets', prop: 'asset' },
};

/**
 * Check digits are enforced here (Ajv only knows the shape); the id is stored bare and upper-cased so the same
 * CNPJ written with or without its mask is one id.
 */
export function checkTaxId(path: string, taxId: TaxIdInput): TaxIdInput {
  if (!isValidTaxId(taxId.type, taxId.value)) throw validationError(`${path}/value`, `is not a valid ${taxId.type}`);
  return { value: normalizeTaxId(taxId.type, taxId.value), type: taxId.type };
}

function checkUniqueAssets(assets: CreateAccountInput['assets']): void {
  const seen = new Set<string>();
  assets.forEach((a, i) => {
    if (seen.has(a.code)) throw validationError(`/assets/${i}/code`, `duplicates asset ${a.code}; asset codes must be unique`);
    seen.add(a.code);
  });
}

export async function createAccount(em: Em, customerId: string, input: CreateAccountInput): Promise<AccountView> {
  checkUniqueAssets(input.assets);
  const taxId = checkTaxId('/owner/taxId', input.owner.taxId);
  // Ajv's `date` format proves a real calendar day; a company cannot have been incorporated tomorrow.
  if (input.owner.incorporateDate > new Date().toISOString().slice(0, 10)) {
    throw validationError('/owner/incorporateDate', 'must not be in the future');
  }
  const now = new Date();
  const owner: CompanyOwner = { ...input.owner, taxId };
  const account = em.create(AccountSchema, {
    id: randomUUID(),
    customerId,
    owner,
    legalName: owner.legalName,
    status: 'ACTION_REQUIRED',
    states: initialStates('ACTION_REQUIRED', now),
    assets: input.assets.map((a) => ({ asset: a.code, allowsVirtualAccounts: a.isVirtual, status: 'ONBOARDING' as const })),
    tags: [],
    sourceAccountId: null,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return presentAccount(account, [], []);
}

// What a document is shown as: everything but its content.
const DOCUMENT_SUMMARY_COLUMNS = 'id, account_id, customer_id, document_type, ubo_id, file_name, content_type, size_bytes, status, reason, created_at';

/**
 * The account's UBOs and documents (without content), both in creation order, keyed by account id, as managed
 * entities (a caller may change them and flush). Views read them as plain objects with the account (`viewOf`).
 */
export async function loadParts(em: Em, accountIds: string[]): Promise<Map<string, { ubos: Ubo[]; documents: DocumentSummary[] }>> {
  const parts = new Map(accountIds.map((id) => [id, { ubos: [] as Ubo[], documents: [] as DocumentSummary[] }]));
  if (accountIds.length === 0) return parts;
  const [ubos, documents] = await Promise.all([
    em.find(UboSchema, { accountId: { $in: accountIds } }, { orderBy: { createdAt: 'asc', id: 'asc' } }),
    em.find(AccountDocumentSchema, { accountId: { $in: accountIds } }, { orderBy: { createdAt: 'asc' } }),
  ]);
  for (const u of ubos) parts.get(u.accountId)?.ubos.push(u);
  for (const d of documents) parts.get(d.accountId)?.documents.push(d);
  return parts;
}

// An account's UBOs and documents for its view, as JSON columns over the account row `a`: one statement with the
// account (a list page reads them with its rows, `listAccounts`; a single view for its account id, `viewOf`).
const ACCOUNT_PARTS = {
  ubos_json: `(select coalesce(json_agg(u order by u.created_at, u.id), '[]') from ubos u where u.account_id = a.id and u.customer_id = a.customer_id)`,
  documents_json:
    `(select coalesce(json_agg(d order by d.created_at, d.id), '[]') from ` +
    `(select ${DOCUMENT_SUMMARY_COLUMNS} from account_documents where account_id = a.id and customer_id = a.customer_id) d)`,
};
type PartsRow = { ubos_json: Record<string, unknown>[]; documents_json: Record<string, unknown>[] };
const PARTS_OF_ONE = `select ${Object.entries(ACCOUNT_PARTS).map(([name, sql]) => `${sql} as ${name}`).join(', ')} from (values (?::uuid, ?::uuid)) a (id, customer_id)`;

function presentWithParts(em: Em, account: Account, parts: PartsRow): AccountView {
  return presentAccount(
    account,
    parts.ubos_json.map((row) => entityFromRow(em, UboSchema, row)),
    parts.documents_json.map((row) => entityFromRow(em, AccountDocumentSchema, row)),
  );
}

export async function viewOf(em: Em, account: Account): Promise<AccountView> {
  const [parts] = await queryRows<PartsRow>(em, PARTS_OF_ONE, [account.id, tenantOf(em)], { prepared: statementName(PARTS_OF_ONE) });
  return presentWithParts(em, account, parts);
}

/** The account in the em's scope, or 404 (also for another customer's id: never reveal that it exists). */
export async function findAccount(em: Em, accountId: string, lock = false): Promise<Account> {
  const account = await em.findOne(AccountSchema, { id: accountId }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : { refresh: true });
  if (!account) throw notFound('account');
  return account;
}

export async function getAccount(em: Em, accountId: string): Promise<AccountView> {
  return viewOf(em, await findAccount(em, accountId));
}

// A page's columns beyond the account's own: its parts, and the list's version read in the same statement.
const ACCOUNT_LIST_COLUMNS = { ...ACCOUNT_PARTS, list_version: listVersionColumn('accounts', 'a') };

/** A page of the customer's accounts, and the version of the list it shows (null when it has none). */
export async function listAccounts(em: Em, query: ListQuery, cursorSecret: string): Promise<{ body: Page<AccountView>; version: string | null }> {
  const page = await runList(em, { entity: AccountSchema, from: 'accounts a', alias: 'a', catalogue: ACCOUNT_FIELDS, columns: ACCOUNT_LIST_COLUMNS }, query, cursorSecret);
  const extras = page.extras as Array<PartsRow & { list_version: string | null }>;
  return {
    body: { data: page.data.map((account, i) => presentWithParts(em, account, extras[i])), meta: page.meta },
    version: extras.length ? extras[0].list_version : null,
  };
}

/**
 * GET /api/accounts as JSON bytes: from this process's copy of the page when the list has not changed since it
 * was read (`servePage`), else read and kept.
 */
export function accountsPageJson(em: Em, cache: PageCache, query: ListQuery, cursorSecret: string): Promise<Buffer> {
  return servePage(em, cache, 'accounts', query, () => listAccounts(em, query, cursorSecret));
}

/**
 * Adds or replaces (by key) a tag on the account. `propagate` tags are copied onto operations created on the
 * account afterwards; the flag itself is internal and never shown.
 */
export async function tagAccount(em: Em, accountId: string, tag: AccountTag): Promise<AccountView> {
  return inTransaction(em, async (tx) => {
    const found = await findAccount(tx, accountId, true);
    found.tags = [...found.tags.filter((t) => t.key !== tag.key), { key: tag.key, value: tag.value, propagate: tag.propagate }];
    found.updatedAt = new Date();
    return viewOf(tx, found);
  });
}
