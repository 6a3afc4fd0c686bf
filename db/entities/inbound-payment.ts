import { EntitySchema } from '@mikro-orm/core';
import type { Dec } from '../../domain/money';
import { MoneyType } from '../types/money';
import { tenantFilter, timestamp } from './common';

/**
 * PENDING: seen on a chain, not yet EVM_CONFIRMATIONS deep (in no balance, not in the suspense); DROPPED: its block
 * left the chain before it was confirmed (never credited). RECEIVED: recorded, not decided yet (never shown as
 * UNMATCHED); MATCHED: counts toward its deposit; UNMATCHED: in the suspense, for an operator; RETURNING: a return in
 * flight (still in the suspense); RETURNED; CREDITED.
 */
export const INBOUND_PAYMENT_STATUSES = [
  'PENDING',
  'DROPPED',
  'RECEIVED',
  'MATCHED',
  'UNMATCHED',
  'RETURNING',
  'RETURNED',
  'CREDITED',
] as const;
export type InboundPaymentStatus = (typeof INBOUND_PAYMENT_STATUSES)[number];

/** Fact: who sent it, as the rail's record shows (TED: the sending account and its owner's CNPJ or CPF). */
export interface InboundPaymentPayer {
  taxId: string;
  personType: 'INDIVIDUAL' | 'COMPANY';
  bankCode?: string;
  branchCode?: string;
  accountNumber?: string;
  accountDigit?: string;
}

/**
 * Money that reached a rail, once per rail reference (`endToEndId`, unique per rail across customers). Its facts
 * (what arrived, for which deposit and customer, through which rail, under which reference) never change, a trigger
 * sees to it; its resolution has fields of its own (decision 0076).
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
  /** Fact: the payer the rail's record names (TED); null when it names none. */
  payer: InboundPaymentPayer | null;
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
  /** Resolution: our id for the return in flight through a provider (PIX: the `devolucao` id). */
  returnId: string | null;
  /** CRYPTO: blocks on top of the transfer's (its own included) at the last scan; null on other rails. */
  confirmations: number | null;
  /** CRYPTO: the block the transfer is in, and that block's hash. */
  blockNumber: string | null;
  blockHash: string | null;
  /** CRYPTO: the token units sent (exact, where `amount` is Cambio's 6 decimals). */
  tokenUnits: string | null;
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
    payer: { type: 'json', nullable: true },
    matchedAmount: { type: MoneyType, nullable: true },
    creditOperationId: { type: 'uuid', nullable: true },
    creditAccountId: { type: 'uuid', nullable: true },
    returnEndToEndId: { type: 'string', nullable: true },
    returnReason: { type: 'text', nullable: true },
    returnFailure: { type: 'text', nullable: true },
    returnId: { type: 'string', nullable: true },
    confirmations: { type: 'integer', nullable: true },
    blockNumber: { type: 'string', nullable: true },
    blockHash: { type: 'string', nullable: true },
    tokenUnits: { type: 'string', nullable: true },
    createdAt: { ...timestamp },
    updatedAt: { ...timestamp },
  },
});
