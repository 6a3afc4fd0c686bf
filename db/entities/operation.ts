import { EntitySchema } from '@mikro-orm/core';
import type { Dec } from '../../domain/money';
import { MoneyType } from '../types/money';
import { StateEntry, Tag, tenantFilter, timestamp } from './common';

export const OPERATION_TYPES = ['DEPOSIT', 'WITHDRAWAL', 'SWAP', 'TRANSFER'] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];
export const OPERATION_STATUSES = [
  'REQUESTED',
  'PROCESSING',
  'ON_HOLD',
  'ACTION_REQUIRED',
  'COMPLETED',
  'FAILED',
] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

export interface OperationFee {
  amount: { value: string; asset: string; decimals: number };
  source: 'FX_SPREAD';
  type: 'PERCENTAGE' | 'ABSOLUTE';
  percentage?: string;
  createdAt: string;
}

export interface OperationTransaction {
  id: string;
  /** PIX for PIX payments; the rail's name (TED, BOLETO, CRYPTO) for the others. */
  type: string;
  direction: 'CREDIT' | 'DEBIT';
  amount: { value: string; asset: string; decimals: number };
  status: string;
  endToEnd: string;
  createdAt: string;
  reason?: string;
}

/** How the operation's quote appears inside it (spec), kept with the operation. */
export interface QuoteReference {
  id: string;
  effectiveRate: { value: string; base: string; quote: string };
  expiresAt: string;
  consumedAt: string | null;
}

export interface Operation {
  id: string;
  customerId: string;
  accountId: string;
  type: OperationType;
  status: OperationStatus;
  states: StateEntry[];
  intent: Record<string, unknown>;
  quoteId: string;
  quoteRef: QuoteReference;
  /** The account's registered owner name at creation. */
  accountOwner: string;
  sourceAsset: string;
  sourceAmount: Dec;
  targetAsset: string;
  targetAmount: Dec;
  targetAccountId: string | null;
  fees: OperationFee[];
  transactions: OperationTransaction[];
  tags: Tag[];
  createdAt: Date;
  updatedAt: Date;
}

export const OperationSchema = new EntitySchema<Operation>({
  name: 'Operation',
  tableName: 'operations',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    customerId: { type: 'uuid' },
    accountId: { type: 'uuid' },
    type: { type: 'string' },
    status: { type: 'string' },
    states: { type: 'json' },
    intent: { type: 'json' },
    quoteId: { type: 'uuid', unique: true },
    quoteRef: { type: 'json' },
    accountOwner: { type: 'string' },
    sourceAsset: { type: 'string' },
    sourceAmount: { type: MoneyType },
    targetAsset: { type: 'string' },
    targetAmount: { type: MoneyType },
    targetAccountId: { type: 'uuid', nullable: true },
    fees: { type: 'json' },
    transactions: { type: 'json' },
    tags: { type: 'json' },
    createdAt: { ...timestamp },
    updatedAt: { ...timestamp },
  },
});
