import { randomInt } from 'node:crypto';
import { cnpjCheckDigits, cpfCheckDigits } from '../../domain/tax-id';
import type { DictKeyType } from '../../domain/dict-key';
import { quote } from './money';
import { eventually, idem, stack, TestCustomer } from './stack';

// Any 9 (CPF) or 12 (CNPJ) base digits get valid check digits; a repeated digit is rejected by design.
const digits = (n: number) => Array.from({ length: n }, () => String(randomInt(10))).join('');
const notAllSame = (s: string) => s.split('').some((c) => c !== s[0]);

export function validCpf(): string {
  let base = digits(9);
  while (!notAllSame(base)) base = digits(9);
  return base + cpfCheckDigits(base);
}

export function validCnpj(): string {
  let base = digits(12);
  while (!notAllSame(base)) base = digits(12);
  return base + cnpjCheckDigits(base);
}

export const testAddress = {
  addressLine1: 'Av. Paulista, 1000',
  addressLine2: 'Conj. 12',
  city: 'São Paulo',
  state: 'SP',
  country: 'BR',
  postalCode: '01310-100',
};

export function individualHolder(overrides: Record<string, unknown> = {}) {
  return {
    type: 'INDIVIDUAL',
    firstName: 'Maria',
    lastName: 'Silva',
    taxId: { value: validCpf(), type: 'CPF' },
    dateOfBirth: '1988-04-12',
    address: testAddress,
    ...overrides,
  };
}

export function pixInstruction(dictKeyType: DictKeyType, dictKey: string, asset = 'BRL') {
  return { type: 'PIX', asset, dictKeyType, dictKey };
}

export function beneficiaryBody(
  instruction: Record<string, unknown> = pixInstruction('EMAIL', 'maria@example.com'),
  extra: Record<string, unknown> = {},
) {
  return { holder: individualHolder(), relationshipType: 'THIRD_PARTY', paymentInstruction: instruction, ...extra };
}

/**
 * A beneficiary whose one PIX instruction is APPROVED, reached the way a client would: create, then the
 * sandbox review. For withdrawal tests, which need an approved instruction to pay out to.
 */
export async function approvedInstruction(customer: TestCustomer, key: { dictKeyType: DictKeyType; dictKey: string }) {
  return approvedBeneficiary(customer, pixInstruction(key.dictKeyType, key.dictKey));
}

/**
 * A beneficiary whose one instruction (a PIX key, a WALLET address) is APPROVED: created, then reviewed through the
 * sandbox route. `created` is the creation's answer, the instruction as the API first presented it.
 */
export async function approvedBeneficiary(customer: TestCustomer, instruction: Record<string, unknown>) {
  const { http } = await stack();
  const created = await http
    .post('/api/beneficiaries')
    .set(customer.auth)
    .set(idem())
    .send(beneficiaryBody(instruction));
  if (created.status !== 201)
    throw new Error(`beneficiary creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  const beneficiaryId: string = created.body.id;
  const instructionId: string = created.body.paymentInstructions[0].id;
  const reviewed = await http
    .post(`/api/sandbox/payment-instructions/${instructionId}/review`)
    .set(customer.auth)
    .set(idem())
    .send({ decision: 'APPROVE' });
  if (reviewed.status !== 200)
    throw new Error(`instruction approval failed: ${reviewed.status} ${JSON.stringify(reviewed.body)}`);
  const beneficiary = await eventually(
    async () => (await http.get(`/api/beneficiaries/${beneficiaryId}`).set(customer.auth)).body,
    (b) => b.paymentInstructions?.[0]?.currentState?.status === 'APPROVED',
  );
  return { beneficiaryId, instructionId, beneficiary, created: created.body };
}

/**
 * A PIX withdrawal of `value` BRL from `accountId` to a new beneficiary whose e-mail key is `dictKey`, approved
 * first: the POST's answer (through `http`, the stack's app unless given).
 */
export async function withdrawToNewKey(
  c: TestCustomer,
  accountId: string,
  dictKey: string,
  value: string,
  http?: ReturnType<typeof import('supertest')>,
) {
  const { beneficiaryId, instructionId } = await approvedInstruction(c, { dictKeyType: 'EMAIL', dictKey });
  const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
  return (http ?? (await stack()).http)
    .post('/api/operations/withdrawal')
    .set(c.auth)
    .set(idem())
    .send({
      accountId,
      quoteId: q.id,
      beneficiary: referenceBeneficiary(beneficiaryId, instructionId),
    });
}

/** A withdrawal's `beneficiary`: a saved beneficiary and one of its payment instructions, by reference. */
export const referenceBeneficiary = (beneficiaryId: string, instructionId: string) => ({
  type: 'REFERENCE' as const,
  id: beneficiaryId,
  paymentInstruction: { type: 'REFERENCE' as const, id: instructionId },
});
