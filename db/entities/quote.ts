import { EntitySchema } from '@mikro-orm/core';
import type { Dec } from '../../domain/money';
import { MoneyType } from '../types/money';
import { tenantFilter, timestamp } from './common';

export interface Quote {
  id: string;
  customerId: string;
  accountId: string;
  sourceAsset: string;
  sourceAmount: Dec;
  targetAsset: string;
  targetAmount: Dec;
  midRate: string;
  effectiveRate: string;
  spread: string;
  /** Which rates priced it (docs/decisions/0115): `oxr`, `table`, `peg`, ...; null on quotes made before. */
  rateSource: string | null;
  /** The instant the source gave for the older of the quote's legs; null for the table, a peg and older quotes. */
  rateSourceTime: Date | null;
  feeAmount: Dec | null;
  expiresAt: Date;
  consumedAt: Date | null;
  consumedBy: string | null;
  createdAt: Date;
}

export const QuoteSchema = new EntitySchema<Quote>({
  name: 'Quote',
  tableName: 'quotes',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    customerId: { type: 'uuid' },
    accountId: { type: 'uuid' },
    sourceAsset: { type: 'string' },
    sourceAmount: { type: MoneyType },
    targetAsset: { type: 'string' },
    targetAmount: { type: MoneyType },
    midRate: { type: 'string' },
    effectiveRate: { type: 'string' },
    spread: { type: 'string' },
    rateSource: { type: 'string', nullable: true },
    rateSourceTime: { ...timestamp, nullable: true },
    feeAmount: { type: MoneyType, nullable: true },
    expiresAt: { ...timestamp },
    consumedAt: { ...timestamp, nullable: true },
    // Unique: the database itself refuses a second consumer (decision 0006: a quote is consumed once).
    consumedBy: { type: 'uuid', nullable: true, unique: true },
    createdAt: { ...timestamp },
  },
});
