import type { Beneficiary, PaymentInstruction } from '../db/entities';
import { currentState } from '../domain/states';

// The holder as beneficiaries.holder stores it (domain/holder.ts `Holder`), read loosely here.
type StoredHolder =
  | {
      type: 'INDIVIDUAL';
      firstName: string;
      lastName: string;
      taxId: { value: string };
      dateOfBirth: string;
      address: unknown;
    }
  | { type: 'COMPANY'; legalName: string; taxId: { value: string }; address: unknown };

/**
 * The spec's beneficiary instruction event payload, shared by CREATED / APPROVED / REJECTED. It carries the
 * affected instruction only. Beyond the spec's fields it names `beneficiaryId` and `instruction.id`: without
 * them a receiver could not make the beneficiary retrieval call the spec sends it to. `taxId` is flattened to
 * its value, as the spec shows. Pure: the caller passes the transition moment.
 */
export function instructionEventPayload(b: Beneficiary, pi: PaymentInstruction, atTime: Date) {
  return {
    customerId: b.customerId,
    beneficiaryId: b.id,
    holder: eventHolder(b),
    relationshipType: b.relationshipType,
    instruction: {
      id: pi.id,
      asset: pi.asset,
      currentState: currentState(pi.states),
      address:
        pi.dictKeyType === 'WALLET'
          ? { type: 'WALLET', rail: pi.rail, network: pi.network ?? '', address: pi.dictKey }
          : { type: 'PIX', rail: pi.rail, keyType: pi.dictKeyType, key: pi.dictKey },
    },
    atTime: atTime.toISOString(),
  };
}

// The spec shows the individual holder; a company holder carries its legal name in place of the
// person's names and birth date.
function eventHolder(b: Beneficiary) {
  const h = b.holder as unknown as StoredHolder;
  if (h.type === 'COMPANY') return { type: h.type, legalName: h.legalName, taxId: h.taxId.value, address: h.address };
  return {
    type: h.type,
    firstName: h.firstName,
    lastName: h.lastName,
    taxId: h.taxId.value,
    dateOfBirth: h.dateOfBirth,
    address: h.address,
  };
}
