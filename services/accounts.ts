// Accounts: create, read, list and tag. Shared by the routes and the CLI; the EntityManager decides the scope
// (a request's tenant em sees one customer, so another customer's account is simply not found).
import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { Em } from '../db/orm';
import { inTransaction } from '../db/transaction';
import {
  Account,
  AccountDocumentSchema,
  AccountSchema,
  AccountTag,
  CompanyOwner,
  Ubo,
  UboSchema,
} from '../db/entities/account';
import { ACCOUNT_LIST, accountParts, DocumentSummary, listRowParts, newAccount } from '../db/repositories/accounts';
import { isValidTaxId, normalizeTaxId, TaxIdType } from '../domain/tax-id';
import { initialStates } from '../domain/states';
import { ListQuery, Page, runList } from '../lists/run-list';
import { notFound, validationError } from '../domain/errors';

type Address = Record<string, string>;
export interface TaxIdInput {
  value: string;
  type: TaxIdType;
}

export interface CreateAccountInput {
  assets: Array<{ code: string; isVirtual: boolean }>;
  owner: {
    type: 'COMPANY';
    legalName: string;
    taxId: TaxIdInput;
    industry: string;
    incorporateDate: string;
    address: Address;
  };
}

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
    if (seen.has(a.code))
      throw validationError(`/assets/${i}/code`, `duplicates asset ${a.code}; asset codes must be unique`);
    seen.add(a.code);
  });
}

/** An account with its UBOs and documents (without content), both in creation order: what its views show. */
export interface AccountRecord {
  account: Account;
  ubos: readonly Ubo[];
  documents: readonly DocumentSummary[];
}

/** A new account of the EntityManager's customer. */
export async function createAccount(em: Em, input: CreateAccountInput): Promise<AccountRecord> {
  checkUniqueAssets(input.assets);
  const taxId = checkTaxId('/owner/taxId', input.owner.taxId);
  // Ajv's `date` format proves a real calendar day; a company cannot have been incorporated tomorrow.
  if (input.owner.incorporateDate > new Date().toISOString().slice(0, 10)) {
    throw validationError('/owner/incorporateDate', 'must not be in the future');
  }
  const now = new Date();
  const owner: CompanyOwner = { ...input.owner, taxId };
  const account = newAccount(em, {
    id: randomUUID(),
    owner,
    legalName: owner.legalName,
    status: 'ACTION_REQUIRED',
    states: initialStates('ACTION_REQUIRED', now),
    assets: input.assets.map((a) => ({
      asset: a.code,
      allowsVirtualAccounts: a.isVirtual,
      status: 'ONBOARDING' as const,
    })),
    tags: [],
    sourceAccountId: null,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return { account, ubos: [], documents: [] };
}

/**
 * The account's UBOs and documents (without content), both in creation order, keyed by account id, as managed
 * entities (a caller may change them and flush). Views read them as plain objects with the account (`viewOf`).
 */
export async function loadParts(
  em: Em,
  accountIds: string[],
): Promise<Map<string, { ubos: Ubo[]; documents: DocumentSummary[] }>> {
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

export async function recordOf(em: Em, account: Account): Promise<AccountRecord> {
  const { ubos, documents } = await accountParts(em, account.id);
  return { account, ubos, documents };
}

/** The account in the em's scope, or 404 (also for another customer's id: never reveal that it exists). */
export async function findAccount(em: Em, accountId: string, lock = false): Promise<Account> {
  const account = await em.findOne(
    AccountSchema,
    { id: accountId },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } : { refresh: true },
  );
  if (!account) throw notFound('account');
  return account;
}

export async function getAccount(em: Em, accountId: string): Promise<AccountRecord> {
  return recordOf(em, await findAccount(em, accountId));
}

/** A page of the customer's accounts, and the version of the list it shows (null when it has none). */
export async function listAccounts(
  em: Em,
  query: ListQuery,
  cursorSecret: string,
): Promise<{ page: Page<AccountRecord>; version: string | null }> {
  const page = await runList(em, ACCOUNT_LIST, query, cursorSecret);
  const parts = (page.extras ?? []).map((extras) => listRowParts(em, extras));
  return {
    page: {
      data: page.data.map((account, i) => ({ account, ubos: parts[i].ubos, documents: parts[i].documents })),
      meta: page.meta,
    },
    version: parts.length ? parts[0].listVersion : null,
  };
}

/**
 * Adds or replaces (by key) a tag on the account. `propagate` tags are copied onto operations created on the
 * account afterwards; the flag itself is internal and never shown.
 */
export async function tagAccount(em: Em, accountId: string, tag: AccountTag): Promise<AccountRecord> {
  return inTransaction(em, async (tx) => {
    const found = await findAccount(tx, accountId, true);
    found.tags = [
      ...found.tags.filter((t) => t.key !== tag.key),
      { key: tag.key, value: tag.value, propagate: tag.propagate },
    ];
    found.updatedAt = new Date();
    return recordOf(tx, found);
  });
}
