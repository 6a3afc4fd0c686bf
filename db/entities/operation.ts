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

/**
 * RECEIVED: recorded, not decided yet (never shown as UNMATCHED); MATCHED: counts toward its deposit; UNMATCHED: in
 * the suspense, for an operator; RETURNING: a return in flight (still in the suspense); RETURNED; CREDITED.
 */
export const INBOUND_PAYMENT_STATUSES = [
  'RECEIVED',
  'MATCHED',
  'UNMATCHED',
  'RETURNING',
  'RETURNED',
  'CREDITED',
] as const;
export type InboundPaymentStatus = (typeof INBOUND_PAYMENT_STATUSES)[number];

/**
 * Money that reached a rail, once per rail reference (`endToEndId`, unique per rail across customers). Its facts
 * (what arrived, for which deposit and customer, through which rail, under which reference) never change, a trigger
 * sees to it; its resolution has fields of its own (docs/decisions.md, "Inbound payments: the facts and their
 * resolution").
 */
export interface InboundPayment {
  id: string;
  /** Fact: the deposit it arrived for (null: none, or unknown for rows credited before the facts were kept). */
  operationId: string | null;
  /** Fact: null for a payment nobody could attribute (the platform's suspense). */
  customerId: string | null;
  /** Fact: the deposit's account. */
  accountId: string | null;
  /** Fact: the amount received (of a remainder: the part split off). */
  amount: Dec;
  asset: string;
  rail: string;
  endToEndId: string;
  status: InboundPaymentStatus;
  /** Fact: set on the excess of an overpayment: the matched record it was split from. */
  remainderOf: string | null;
  /** Resolution: what its deposit used, when that is less than the amount received (the rest is a remainder). */
  matchedAmount: Dec | null;
  /** Resolution: the DEPOSIT an operator's credit created, and its account. */
  creditOperationId: string | null;
  creditAccountId: string | null;
  returnEndToEndId: string | null;
  returnReason: string | null;
  /** Why the last return attempt failed (the payment is UNMATCHED again). */
  returnFailure: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const InboundPaymentSchema = new EntitySchema<InboundPayment>({
  name: 'InboundPayment',
  tableName: 'inbound_payments',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    operationId: { type: 'uuid', nullable: true, index: true },
    customerId: { type: 'uuid', nullable: true },
    accountId: { type: 'uuid', nullable: true },
    amount: { type: MoneyType },
    asset: { type: 'string' },
    rail: { type: 'string' },
    endToEndId: { type: 'string' },
    status: { type: 'string' },
    remainderOf: { type: 'uuid', nullable: true },
    matchedAmount: { type: MoneyType, nullable: true },
    creditOperationId: { type: 'uuid', nullable: true },
    creditAccountId: { type: 'uuid', nullable: true },
    returnEndToEndId: { type: 'string', nullable: true },
    returnReason: { type: 'text', nullable: true },
    returnFailure: { type: 'text', nullable: true },
    createdAt: { ...timestamp },
    updatedAt: { ...timestamp },
  },
});
