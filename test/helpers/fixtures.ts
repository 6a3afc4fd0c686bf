// Test data for accounts, shared by every integration suite: valid tax ids, request bodies, and
// `activeAccount`, which onboards an account end to end (documents, review, sandbox approval) to ACTIVE.
import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import { cnpjCheckDigits, cpfCheckDigits } from '../../domain/tax-id';
import type { AssetCode } from '../../domain/assets';
import type { AccountView, UboView } from '../../presenters/account';
import { eventually, idem, stack, TestCustomer } from './stack';

const DIGITS = '0123456789';
const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

// A repeated character is never a valid id (domain/tax-id.ts), so bases start with two different characters.
function randomBase(alphabet: string, length: number): string {
  let s = '';
  while (s.length < length) s += alphabet[randomInt(alphabet.length)];
  return s[0] === s[1] ? randomBase(alphabet, length) : s;
}

/** A random valid CPF, 11 bare digits. */
export function validCpf(): string {
  const base = randomBase(DIGITS, 9);
  return base + cpfCheckDigits(base);
}

/** A random valid numeric CNPJ, 14 bare digits. */
export function validCnpj(): string {
  const base = randomBase(DIGITS, 12);
  return base + cnpjCheckDigits(base);
}

/** A random valid alphanumeric CNPJ (IN RFB 2.229/2024): 12 of [0-9A-Z] with at least one letter, then 2 digits. */
export function validAlphanumericCnpj(): string {
  const base = randomBase(ALNUM, 11) + 'K';
  return base + cnpjCheckDigits(base);
}

/** The same id with its last check digit changed: right format, wrong check digit. */
export function withWrongCheckDigit(taxId: string): string {
  const last = Number(taxId[taxId.length - 1]);
  return taxId.slice(0, -1) + String((last + 1) % 10);
}

export const address = () => ({
  addressLine1: 'Av. Paulista, 1000',
  city: 'São Paulo',
  state: 'SP',
  country: 'BR',
  postalCode: '01310-100',
});

export interface AccountBodyOptions {
  assets?: Array<AssetCode | { code: AssetCode; isVirtual: boolean }>;
  legalName?: string;
  taxId?: { value: string; type: 'CPF' | 'CNPJ' };
}

/** A valid POST /api/accounts body; assets default to BRL and USD, not virtual. */
export function accountBody(opts: AccountBodyOptions = {}) {
  const assets = (opts.assets ?? ['BRL', 'USD']).map((a) =>
    typeof a === 'string' ? { code: a, isVirtual: false } : a,
  );
  return {
    assets,
    owner: {
      type: 'COMPANY',
      legalName: opts.legalName ?? 'Acme Comércio Ltda',
      taxId: opts.taxId ?? { value: validCnpj(), type: 'CNPJ' },
      industry: 'TECHNOLOGY',
      incorporateDate: '2015-03-10',
      address: address(),
    },
  };
}

/** A valid POST /api/accounts/{id}/ubos body. */
export const uboBody = (overrides: Record<string, unknown> = {}) => ({
  name: 'Maria da Silva',
  taxId: { value: validCpf(), type: 'CPF' },
  address: address(),
  ownershipPercentage: 60,
  ...overrides,
});

/** A small document body; `content` is base64 of a few bytes unless given. */
export const documentBody = (
  documentType: string,
  uboId?: string,
  content = Buffer.from('%PDF-1.4 test document').toString('base64'),
) => ({
  documentType,
  ...(uboId ? { uboId } : {}),
  fileName: `${documentType.toLowerCase()}.pdf`,
  contentType: 'application/pdf',
  content,
});

async function expectStatus<T>(req: Promise<{ status: number; body: T }>, status: number, what: string): Promise<T> {
  const res = await req;
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).to.equal(status);
  return res.body;
}

export async function createAccount(customer: TestCustomer, opts: AccountBodyOptions = {}): Promise<AccountView> {
  const { http } = await stack();
  return expectStatus(
    http.post('/api/accounts').set(customer.auth).set(idem()).send(accountBody(opts)),
    201,
    'create account',
  );
}

export async function addUbo(
  customer: TestCustomer,
  accountId: string,
  overrides: Record<string, unknown> = {},
): Promise<UboView> {
  const { http } = await stack();
  return expectStatus(
    http.post(`/api/accounts/${accountId}/ubos`).set(customer.auth).set(idem()).send(uboBody(overrides)),
    201,
    'add UBO',
  );
}

/** Uploads one document for everything the account currently has due or in errors. */
export async function uploadAllDocuments(customer: TestCustomer, accountId: string): Promise<void> {
  const { http } = await stack();
  const account = await getAccount(customer, accountId);
  for (const r of [...account.requirements.currentlyDue, ...account.requirements.errors]) {
    await expectStatus(
      http
        .post(`/api/accounts/${accountId}/documents`)
        .set(customer.auth)
        .set(idem())
        .send(documentBody(r.documentType, r.uboId ?? undefined)),
      201,
      `upload ${r.documentType}`,
    );
  }
}

export async function getAccount(customer: TestCustomer, accountId: string): Promise<AccountView> {
  const { http } = await stack();
  return expectStatus(http.get(`/api/accounts/${accountId}`).set(customer.auth), 200, 'get account');
}

export async function submitReview(customer: TestCustomer, accountId: string): Promise<AccountView> {
  const { http } = await stack();
  return expectStatus(
    http.post(`/api/accounts/${accountId}/review`).set(customer.auth).set(idem()),
    202,
    'submit review',
  );
}

export async function sandboxDecide(
  customer: TestCustomer,
  accountId: string,
  decision: 'APPROVE' | 'REJECT',
  reason?: string,
): Promise<AccountView> {
  const { http } = await stack();
  const body = reason === undefined ? { decision } : { decision, reason };
  return expectStatus(
    http.post(`/api/sandbox/accounts/${accountId}/review`).set(customer.auth).set(idem()).send(body),
    200,
    `sandbox ${decision}`,
  );
}

/**
 * An ACTIVE account of `customer` with `assets` ACTIVE (default BRL and USD): created, documents uploaded,
 * submitted and approved through the sandbox route, exactly as a client would.
 */
export async function activeAccount(
  customer: TestCustomer,
  assets: Array<AssetCode | { code: AssetCode; isVirtual: boolean }> = ['BRL', 'USD'],
  opts: Omit<AccountBodyOptions, 'assets'> & { withUbo?: boolean } = {},
): Promise<AccountView> {
  const created = await createAccount(customer, { ...opts, assets });
  if (opts.withUbo) await addUbo(customer, created.id);
  await uploadAllDocuments(customer, created.id);
  await submitReview(customer, created.id);
  await sandboxDecide(customer, created.id, 'APPROVE');
  return eventually(
    () => getAccount(customer, created.id),
    (a) => a.currentState.status === 'ACTIVE',
  );
}
