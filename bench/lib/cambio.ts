// The client side of the benches, done the way an integration does it (same bodies as test/helpers/fixtures.ts
// and test/helpers/money.ts): an operator-created customer, a token from the token endpoint, accounts
// onboarded to ACTIVE through the sandbox review route, funded by a same-asset deposit paid in through the
// sandbox inbound-payment route.
import { randomInt } from 'node:crypto';
import { openOrm } from '../../db/orm';
import { createCustomer } from '../../services/auth';
import { cnpjCheckDigits, cpfCheckDigits } from '../../domain/tax-id';
import { expectStatus, JsonClient } from './http';
import { sleep } from './load';

export interface BenchCustomer {
  customerId: string;
  clientId: string;
  token: string;
  /** A keep-alive client that sends the bearer token. */
  http: JsonClient;
}

/** createCustomer (the operator action, straight on the database), then a token as a client gets one. */
export async function newCustomer(
  databaseUrl: string,
  apiUrl: string,
  name = 'Bench Ltda',
  maxSockets = 64,
): Promise<BenchCustomer> {
  const orm = await openOrm(databaseUrl, { poolMax: 2 });
  let created;
  try {
    created = await createCustomer(orm, name);
  } finally {
    await orm.close(true);
  }
  const anon = new JsonClient(apiUrl);
  const res = await anon.request('POST', '/api/oauth/client/token', {
    clientId: created.clientId,
    clientSecret: created.clientSecret,
  });
  anon.close();
  const { accessToken } = expectStatus(res, 200, 'token');
  return {
    customerId: created.customerId,
    clientId: created.clientId,
    token: accessToken,
    http: new JsonClient(apiUrl, { maxSockets, headers: { authorization: `Bearer ${accessToken}` } }),
  };
}

function validCnpj(): string {
  let base = '';
  while (base.length < 12) base += String(randomInt(10));
  if (base[0] === base[1]) return validCnpj(); // a repeated digit is never a valid id
  return base + cnpjCheckDigits(base);
}

export function accountBody(assets: string[], legalName = 'Bench Comércio Ltda') {
  return {
    assets: assets.map((code) => ({ code, isVirtual: false })),
    owner: {
      type: 'COMPANY',
      legalName,
      taxId: { value: validCnpj(), type: 'CNPJ' },
      industry: 'TECHNOLOGY',
      incorporateDate: '2015-03-10',
      address: {
        addressLine1: 'Av. Paulista, 1000',
        city: 'São Paulo',
        state: 'SP',
        country: 'BR',
        postalCode: '01310-100',
      },
    },
  };
}

const documentBody = (documentType: string, uboId?: string) => ({
  documentType,
  ...(uboId ? { uboId } : {}),
  fileName: `${documentType.toLowerCase()}.pdf`,
  contentType: 'application/pdf',
  content: Buffer.from('%PDF-1.4 bench document').toString('base64'),
});

export async function eventually<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 30000,
  stepMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  do {
    last = await fn();
    if (ok(last)) return last;
    await sleep(stepMs);
  } while (Date.now() < deadline);
  throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last).slice(0, 500)}`);
}

export async function createAccount(c: BenchCustomer, assets: string[], legalName?: string): Promise<{ id: string }> {
  return expectStatus(await c.http.post('/api/accounts', accountBody(assets, legalName)), 201, 'create account');
}

function validCpf(): string {
  let base = '';
  while (base.length < 9) base += String(randomInt(10));
  if (base[0] === base[1]) return validCpf();
  return base + cpfCheckDigits(base);
}

/**
 * A beneficiary whose one PIX instruction (an EMAIL key) is APPROVED, as test/helpers/beneficiary-fixtures.ts makes
 * one: created, approved through the sandbox review route, polled until APPROVED. For withdrawals to pay out to.
 */
export async function approvedBeneficiary(
  c: BenchCustomer,
  dictKey: string,
): Promise<{ beneficiaryId: string; instructionId: string }> {
  const created = expectStatus(
    await c.http.post('/api/beneficiaries', {
      holder: {
        type: 'INDIVIDUAL',
        firstName: 'Maria',
        lastName: 'Silva',
        taxId: { value: validCpf(), type: 'CPF' },
        dateOfBirth: '1988-04-12',
        address: {
          addressLine1: 'Av. Paulista, 1000',
          city: 'São Paulo',
          state: 'SP',
          country: 'BR',
          postalCode: '01310-100',
        },
      },
      relationshipType: 'THIRD_PARTY',
      paymentInstruction: { type: 'PIX', asset: 'BRL', dictKeyType: 'EMAIL', dictKey },
    }),
    201,
    'create beneficiary',
  );
  const beneficiaryId: string = created.id;
  const instructionId: string = created.paymentInstructions[0].id;
  expectStatus(
    await c.http.post(`/api/sandbox/payment-instructions/${instructionId}/review`, { decision: 'APPROVE' }),
    200,
    'sandbox approve instruction',
  );
  await eventually(
    async () => expectStatus(await c.http.get(`/api/beneficiaries/${beneficiaryId}`), 200, 'get beneficiary'),
    (b) => b.paymentInstructions?.[0]?.currentState?.status === 'APPROVED',
  );
  return { beneficiaryId, instructionId };
}

/** Created, documents uploaded for everything due, submitted, approved in the sandbox, polled until ACTIVE. */
export async function activeAccount(c: BenchCustomer, assets: string[] = ['BRL', 'USD']): Promise<string> {
  const { id } = await createAccount(c, assets);
  const account = expectStatus(await c.http.get(`/api/accounts/${id}`), 200, 'get account');
  for (const r of [...account.requirements.currentlyDue, ...account.requirements.errors]) {
    expectStatus(
      await c.http.post(`/api/accounts/${id}/documents`, documentBody(r.documentType, r.uboId ?? undefined)),
      201,
      `upload ${r.documentType}`,
    );
  }
  expectStatus(await c.http.post(`/api/accounts/${id}/review`), 202, 'submit review');
  expectStatus(
    await c.http.post(`/api/sandbox/accounts/${id}/review`, { decision: 'APPROVE' }),
    200,
    'sandbox approve',
  );
  await eventually(
    async () => expectStatus(await c.http.get(`/api/accounts/${id}`), 200, 'get account'),
    (a) => a.currentState.status === 'ACTIVE',
  );
  return id;
}

export async function quote(c: BenchCustomer, body: Record<string, unknown>) {
  return expectStatus(await c.http.post('/api/quotes', body), 201, 'quote');
}

export async function untilStatus(
  c: BenchCustomer,
  operationId: string,
  status: string,
  timeoutMs = 30000,
  stepMs = 100,
) {
  return eventually(
    async () => expectStatus(await c.http.get(`/api/operations/${operationId}`), 200, 'get operation'),
    (op) => {
      if (op.currentState?.status === 'FAILED' && status !== 'FAILED')
        throw new Error(`operation ${operationId} FAILED: ${JSON.stringify(op.currentState)}`);
      return op.currentState?.status === status;
    },
    timeoutMs,
    stepMs,
  );
}

/**
 * A same-asset deposit paid in through the sandbox and reconciled (test/helpers/money.ts `fund`); returns the
 * deposit's operation id. On a stack with the simulated PSP, the sandbox route has the PSP pay the deposit's PIX
 * charge and answers once the PSP's notice is recorded (rails/pix/sandbox-payer.ts, services/sandbox-recorded.ts).
 */
export async function fund(c: BenchCustomer, accountId: string, asset: string, value: string): Promise<string> {
  const q = await quote(c, { accountId, sourceAsset: asset, targetAsset: asset, sourceAmount: value });
  const rail = ['USDC', 'USDT', 'EURC', 'BRLT'].includes(asset) ? 'CRYPTO' : 'PIX_KEY';
  const dep = expectStatus(
    await c.http.post('/api/operations/deposit', { accountId, quoteId: q.id, fundingInstruction: { rail } }),
    201,
    'deposit',
  );
  expectStatus(
    await c.http.post(`/api/sandbox/operations/${dep.id}/inbound-payment`, { amount: { value, asset } }),
    200,
    'inbound payment',
  );
  await untilStatus(c, dep.id, 'COMPLETED');
  return dep.id;
}
