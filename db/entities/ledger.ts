import { EntitySchema } from '@mikro-orm/core';
import type { Dec } from '../../domain/money';
import { MoneyType } from '../types/money';
import { timestamp } from './common';

/**
 * Double-entry ledger. A transaction's entries sum to zero per asset. Customer money sits in the
 * books `available` and `held` of an account; the outside world is a set of system books
 * (account_id null) such as `world:pix`, `world:fx`, `revenue:fx_spread`.
 */
export interface LedgerTransaction {
  id: string;
  // `${operationId}:${step}`: unique, so a retried activity finds its posting instead of posting twice.
  key: string;
  operationId: string | null;
  description: string;
  createdAt: Date;
}

export const LedgerTransactionSchema = new EntitySchema<LedgerTransaction>({
  name: 'LedgerTransaction',
  tableName: 'ledger_transactions',
  properties: {
    id: { type: 'uuid', primary: true },
    key: { type: 'string', unique: true },
    operationId: { type: 'uuid', nullable: true, index: true },
    description: { type: 'string' },
    createdAt: { ...timestamp },
  },
});

export interface LedgerEntry {
  id: string;
  transactionId: string;
  accountId: string | null;
  book: string;
  asset: string;
  amount: Dec;
  createdAt: Date;
  /** Customer entries only: the balance row's move count, booking instant and books after this posting. */
  balanceSeq: string | null;
  bookedAt: Date | null;
  availableAfter: Dec | null;
  heldAfter: Dec | null;
}

export const LedgerEntrySchema = new EntitySchema<LedgerEntry>({
  name: 'LedgerEntry',
  tableName: 'ledger_entries',
  properties: {
    id: { type: 'uuid', primary: true },
    transactionId: { type: 'uuid', index: true },
    accountId: { type: 'uuid', nullable: true, index: true },
    book: { type: 'string' },
    asset: { type: 'string' },
    amount: { type: MoneyType },
    createdAt: { ...timestamp },
    balanceSeq: { type: 'bigint', nullable: true },
    bookedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    availableAfter: { type: MoneyType, nullable: true },
    heldAfter: { type: MoneyType, nullable: true },
  },
});

/** Running balances per account and asset, kept in the same transaction as the entries that move them. */
export interface Balance {
  accountId: string;
  asset: string;
  customerId: string;
  available: Dec;
  held: Dec;
  updatedAt: Date;
  /** How many postings moved the row; the booking instant of the last one (never goes back). */
  seq: string;
  bookedAt: Date | null;
}

export const BalanceSchema = new EntitySchema<Balance>({
  name: 'Balance',
  tableName: 'balances',
  properties: {
    accountId: { type: 'uuid', primary: true },
    asset: { type: 'string', primary: true },
    customerId: { type: 'uuid' },
    available: { type: MoneyType },
    held: { type: MoneyType },
    updatedAt: { ...timestamp },
    seq: { type: 'bigint', default: 0 },
    bookedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});
