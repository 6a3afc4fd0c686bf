import { EntitySchema } from '@mikro-orm/core';
import { StateEntry, tenantFilter, timestamp } from './common';

export const RELATIONSHIP_TYPES = ['SELF_OWNED', 'THIRD_PARTY'] as const;

export interface Beneficiary {
  id: string;
  customerId: string;
  holder: Record<string, unknown>;
  relationshipType: (typeof RELATIONSHIP_TYPES)[number];
  createdAt: Date;
  updatedAt: Date;
}

export const BeneficiarySchema = new EntitySchema<Beneficiary>({
  name: 'Beneficiary',
  tableName: 'beneficiaries',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    customerId: { type: 'uuid' },
    holder: { type: 'json' },
    relationshipType: { type: 'string' },
    createdAt: { ...timestamp },
    updatedAt: { ...timestamp },
  },
});

export interface PaymentInstruction {
  id: string;
  beneficiaryId: string;
  customerId: string;
  asset: string;
  /** A DICT key's rail (rails/pix/): PIX_RAIL; a WALLET's: CRYPTO. */
  rail: string;
  /** PIX: the DICT key's type; a WALLET instruction: `WALLET`. */
  dictKeyType: string;
  /** PIX: the DICT key; a WALLET instruction: its EIP-55 address. */
  dictKey: string;
  /** A WALLET instruction's chain (CRYPTO_NETWORK); null for PIX. */
  network?: string | null;
  status: 'PENDING_REVIEW' | 'APPROVED' | 'REJECTED';
  states: StateEntry[];
  createdAt: Date;
  updatedAt: Date;
}

export const PaymentInstructionSchema = new EntitySchema<PaymentInstruction>({
  name: 'PaymentInstruction',
  tableName: 'payment_instructions',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    beneficiaryId: { type: 'uuid', index: true },
    customerId: { type: 'uuid' },
    asset: { type: 'string' },
    rail: { type: 'string' },
    dictKeyType: { type: 'string' },
    dictKey: { type: 'string' },
    network: { type: 'string', nullable: true },
    status: { type: 'string' },
    states: { type: 'json' },
    createdAt: { ...timestamp },
    updatedAt: { ...timestamp },
  },
});
