import { EntitySchema } from '@mikro-orm/core';
import { StateEntry, Tag, tenantFilter, timestamp } from './common';

export const ACCOUNT_STATUSES = ['ACTION_REQUIRED', 'UNDER_REVIEW', 'ACTIVE'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

export interface AccountAsset {
  asset: string;
  allowsVirtualAccounts: boolean;
  status: 'ONBOARDING' | 'ACTIVE';
}

/** A tag on an account; `propagate` copies it onto every operation created on the account. */
export interface AccountTag extends Tag {
  propagate: boolean;
}

export interface CompanyOwner {
  type: 'COMPANY';
  legalName: string;
  taxId: { value: string; type: string };
  industry: string;
  incorporateDate: string;
  address: Record<string, string>;
}

export interface Account {
  id: string;
  customerId: string;
  owner: CompanyOwner;
  legalName: string;
  status: string;
  states: StateEntry[];
  assets: AccountAsset[];
  tags: AccountTag[];
  sourceAccountId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const AccountSchema = new EntitySchema<Account>({
  name: 'Account',
  tableName: 'accounts',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    customerId: { type: 'uuid' },
    owner: { type: 'json' },
    // Denormalised from owner so lists can filter and index it.
    legalName: { type: 'string' },
    status: { type: 'string' },
    states: { type: 'json' },
    assets: { type: 'json' },
    tags: { type: 'json' },
    sourceAccountId: { type: 'uuid', nullable: true },
    createdAt: { ...timestamp },
    updatedAt: { ...timestamp },
  },
});

export interface Ubo {
  id: string;
  accountId: string;
  customerId: string;
  name: string;
  taxId: { value: string; type: string };
  address: Record<string, string>;
  ownershipPercentage: number | null;
  status: string;
  states: StateEntry[];
  createdAt: Date;
  updatedAt: Date;
}

export const UboSchema = new EntitySchema<Ubo>({
  name: 'Ubo',
  tableName: 'ubos',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    accountId: { type: 'uuid', index: true },
    customerId: { type: 'uuid' },
    name: { type: 'string' },
    taxId: { type: 'json' },
    address: { type: 'json' },
    ownershipPercentage: { type: 'double', nullable: true },
    status: { type: 'string' },
    states: { type: 'json' },
    createdAt: { ...timestamp },
    updatedAt: { ...timestamp },
  },
});

/** An uploaded onboarding document. Its status drives the account's requirements. */
export interface AccountDocument {
  id: string;
  accountId: string;
  customerId: string;
  documentType: string;
  uboId: string | null;
  fileName: string;
  contentType: string;
  sizeBytes: number;
  content: Buffer;
  status: 'PENDING_VERIFICATION' | 'ACCEPTED' | 'REJECTED';
  reason: string | null;
  createdAt: Date;
}

export const AccountDocumentSchema = new EntitySchema<AccountDocument>({
  name: 'AccountDocument',
  tableName: 'account_documents',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    accountId: { type: 'uuid', index: true },
    customerId: { type: 'uuid' },
    documentType: { type: 'string' },
    uboId: { type: 'uuid', nullable: true },
    fileName: { type: 'string' },
    contentType: { type: 'string' },
    sizeBytes: { type: 'integer' },
    content: { type: 'blob', lazy: true },
    status: { type: 'string' },
    reason: { type: 'string', nullable: true },
    createdAt: { ...timestamp },
  },
});
