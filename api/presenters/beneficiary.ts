import type { Beneficiary, PaymentInstruction } from '../../db/entities';
import { currentState } from '../../domain/states';

export interface HolderAddress {
  addressLine1: string;
  addressLine2?: string;
  city: string;
  state?: string;
  country: string;
  postalCode: string;
}

export interface IndividualHolder {
  type: 'INDIVIDUAL';
  firstName: string;
  lastName: string;
  taxId: { value: string; type: 'CPF' };
  dateOfBirth: string;
  address: HolderAddress;
}

export interface CompanyHolder {
  type: 'COMPANY';
  legalName: string;
  taxId: { value: string; type: 'CNPJ' };
  address: HolderAddress;
}

/** What `beneficiaries.holder` stores: the request's holder with the tax id normalised to bare characters. */
export type Holder = IndividualHolder | CompanyHolder;

export const holderOf = (b: Beneficiary): Holder => b.holder as unknown as Holder;

export function presentInstruction(pi: PaymentInstruction) {
  return {
    id: pi.id,
    asset: pi.asset,
    currentState: currentState(pi.states),
    address: instructionAddress(pi),
    createdAt: pi.createdAt.toISOString(),
  };
}

const base = (b: Beneficiary) => ({
  id: b.id,
  customerId: b.customerId,
  holder: holderOf(b),
  relationshipType: b.relationshipType,
});

/** The full Beneficiary; `instructions` in creation order, so the first one is the one it was created with. */
export function presentBeneficiary(b: Beneficiary, instructions: PaymentInstruction[]) {
  return {
    ...base(b),
    paymentInstructions: instructions.map(presentInstruction),
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}

/** The list entry: the beneficiary fields with `instructionCount` in place of `paymentInstructions` (spec). */
export function presentBeneficiarySummary(b: Beneficiary, instructionCount: number) {
  return {
    ...base(b),
    instructionCount,
    createdAt: b.createdAt.toISOString(),
    updatedAt: b.updatedAt.toISOString(),
  };
}

/** Where an instruction pays: a DICT key (PIX), or a WALLET on a chain (CRYPTO, decision 0134). */
export function instructionAddress(pi: PaymentInstruction) {
  if (pi.dictKeyType === WALLET) {
    return { rail: pi.rail, type: WALLET, network: pi.network ?? '', address: pi.dictKey };
  }
  return { rail: pi.rail, dictKeyType: pi.dictKeyType, dictKey: pi.dictKey };
}

/** A WALLET instruction's type, stored where a PIX key's type is. */
export const WALLET = 'WALLET';
