import type { Beneficiary, PaymentInstruction } from '../db/entities';
import type { Page } from '../lists/run-list';
import { currentState } from '../domain/states';
import type { Holder } from '../domain/holder';
import type { BeneficiaryRecord, BeneficiarySummaryRecord } from '../services/beneficiaries';
import { WALLET } from '../domain/dict-key';

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

/** A use case's beneficiary (services/beneficiaries.ts), as the API and the CLI show it. */
export const presentBeneficiaryRecord = (r: BeneficiaryRecord) => presentBeneficiary(r.beneficiary, r.instructions);

/** A page of use-case summaries as the list shows it. */
export const presentBeneficiarySummaries = (page: Page<BeneficiarySummaryRecord>) => ({
  data: page.data.map((r) => presentBeneficiarySummary(r.beneficiary, r.instructionCount)),
  meta: page.meta,
});

/** Where an instruction pays: a DICT key (PIX), or a WALLET on a chain (CRYPTO, decision 0134). */
export function instructionAddress(pi: PaymentInstruction) {
  if (pi.dictKeyType === WALLET) {
    return { rail: pi.rail, type: WALLET, network: pi.network ?? '', address: pi.dictKey };
  }
  return { rail: pi.rail, dictKeyType: pi.dictKeyType, dictKey: pi.dictKey };
}
