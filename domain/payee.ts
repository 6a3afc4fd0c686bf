// Who a withdrawal pays, read from its own snapshot of the beneficiary and the approved instruction (the intent
// written at creation, which the payout sends as it is): what an operator weighs before deciding a hold (0310).

type Holder = { name?: string; legalName?: string; firstName?: string; lastName?: string };

export interface Payee {
  beneficiaryId: string;
  /** The holder's legal name (a company) or first and last names (a person). */
  name: string;
  paymentInstruction: { id: string; rail: string; keyType: string; key: string; network?: string };
}

/** A beneficiary holder's name as people read it: a company's legal name, or a person's first and last names. */
export function holderName(holder: Holder | undefined): string {
  return holder?.legalName ?? holder?.name ?? [holder?.firstName, holder?.lastName].filter(Boolean).join(' ');
}

/** The payee of a withdrawal's intent; undefined for an operation that pays nobody. */
export function payeeOf(intent: Record<string, unknown>): Payee | undefined {
  const beneficiary = intent.beneficiary as
    { id: string; holder?: Holder; paymentInstruction: Payee['paymentInstruction'] } | undefined;
  if (!beneficiary?.paymentInstruction) return undefined;
  const { id, rail, keyType, key, network } = beneficiary.paymentInstruction;
  return {
    beneficiaryId: beneficiary.id,
    name: holderName(beneficiary.holder),
    paymentInstruction: { id, rail, keyType, key, ...(network ? { network } : {}) },
  };
}
