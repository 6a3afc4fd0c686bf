// Entities → the API's JSON (interface.md, "Account" and "Beneficial owner"). The internal `propagate` flag of
// tags, the denormalised legal_name column and document contents never leave through here.
import type { Account, Ubo } from '../db/entities/account';
import type { DocumentSummary } from '../db/repositories/accounts';
import type { StateEntry } from '../db/entities/common';
import { computeRequirements, Requirements } from '../domain/requirements';
import { currentState } from '../domain/states';
import type { AccountRecord } from '../services/accounts';

type Address = Record<string, string>;

export interface UboView {
  id: string;
  name: string;
  taxId: { value: string; type: string };
  address: Address;
  currentState: StateEntry;
  ownershipPercentage: number | null;
}

export interface AccountView {
  id: string;
  customer: { id: string };
  owner: {
    type: 'COMPANY';
    legalName: string;
    taxId: { value: string; type: string };
    industry: string;
    incorporateDate: string;
    address: Address;
    ubos: UboView[];
  };
  assets: Array<{ asset: string; allowsVirtualAccounts: boolean; status: string }>;
  requirements: Requirements;
  tags: Array<{ key: string | null; value: string }>;
  currentState: StateEntry;
  states: StateEntry[];
  createdAt: string;
  updatedAt: string;
  sourceAccountId: string | null;
}

export interface DocumentView {
  id: string;
  documentType: string;
  uboId: string | null;
  fileName: string;
  contentType: string;
  size: number;
  status: string;
  createdAt: string;
}

/** The document fields requirements and the presenter read; `content` is never part of it. */
export type { DocumentSummary };

export function presentUbo(ubo: Ubo): UboView {
  return {
    id: ubo.id,
    name: ubo.name,
    taxId: { value: ubo.taxId.value, type: ubo.taxId.type },
    address: ubo.address,
    currentState: currentState(ubo.states),
    ownershipPercentage: ubo.ownershipPercentage ?? null,
  };
}

/** `ubos` and `documents` are the account's own, in creation order. */
export function presentAccount(
  account: Account,
  ubos: readonly Ubo[],
  documents: readonly DocumentSummary[],
): AccountView {
  const { owner } = account;
  return {
    id: account.id,
    customer: { id: account.customerId },
    owner: {
      type: owner.type,
      legalName: owner.legalName,
      taxId: { value: owner.taxId.value, type: owner.taxId.type },
      industry: owner.industry,
      incorporateDate: owner.incorporateDate,
      address: owner.address,
      ubos: ubos.map(presentUbo),
    },
    assets: account.assets.map((a) => ({
      asset: a.asset,
      allowsVirtualAccounts: a.allowsVirtualAccounts,
      status: a.status,
    })),
    requirements: computeRequirements(
      ubos.map((u) => u.id),
      documents,
    ),
    tags: account.tags.map((t) => ({ key: t.key, value: t.value })),
    currentState: currentState(account.states),
    states: account.states,
    createdAt: account.createdAt.toISOString(),
    updatedAt: account.updatedAt.toISOString(),
    sourceAccountId: account.sourceAccountId ?? null,
  };
}

/** The account of a use case's record (services/accounts.ts), as the API and the CLI show it. */
export const presentAccountRecord = (r: AccountRecord): AccountView => presentAccount(r.account, r.ubos, r.documents);

export function presentDocument(doc: DocumentSummary): DocumentView {
  return {
    id: doc.id,
    documentType: doc.documentType,
    uboId: doc.uboId,
    fileName: doc.fileName,
    contentType: doc.contentType,
    size: doc.sizeBytes,
    status: doc.status,
    createdAt: doc.createdAt.toISOString(),
  };
}
