// One of each resource a route of /openapi.json names, and a body each POST or PATCH takes, for the tests that send
// every route of the document (fuzz.test.ts, outage-sweep.test.ts): requests that name real ids and valid bodies get
// past the lookups and the schemas, as deep as the test wants them to go.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type supertest from 'supertest';
import { accountBody, activeAccount, documentBody, uboBody } from './fixtures';
import { beneficiaryBody, pixInstruction } from './beneficiary-fixtures';
import { fund, quote } from './money';
import type { OpenApiOperation } from './openapi';
import { idem, type TestCustomer } from './stack';

export interface RouteSamples {
  /** By path parameter name: a funded ACTIVE account, a pending one with a UBO, a beneficiary, a deposit. */
  ids: Record<string, string>;
  /** By `METHOD /path` as the document writes it: a body that passes the route's schema, made anew each call. */
  bodies: Record<string, () => Promise<unknown>>;
}

/** Creates the customer's sample resources through `http` (the app under test) and the bodies that name them. */
export async function routeSamples(http: ReturnType<typeof supertest>, customer: TestCustomer): Promise<RouteSamples> {
  const source = await activeAccount(customer, ['BRL', 'USD'], { withUbo: true });
  const target = await activeAccount(customer, ['BRL', 'USD']);
  await fund(customer, source.id, 'BRL', '1000.00');
  const pending = await http.post('/api/accounts').set(customer.auth).set(idem()).send(accountBody());
  const ubo = await http.post(`/api/accounts/${pending.body.id}/ubos`).set(customer.auth).set(idem()).send(uboBody());
  const beneficiary = await http.post('/api/beneficiaries').set(customer.auth).set(idem()).send(beneficiaryBody());
  const deposit = await http
    .post('/api/operations/deposit')
    .set(customer.auth)
    .set(idem())
    .send(await depositBody(customer, source.id));
  expect(deposit.status, JSON.stringify(deposit.body)).to.equal(201);
  const ids = {
    accountId: source.id,
    sourceAccountId: source.id,
    targetAccountId: target.id,
    pendingAccountId: pending.body.id,
    uboId: ubo.body.id,
    beneficiaryId: beneficiary.body.id,
    instructionId: beneficiary.body.paymentInstructions[0].id,
    operationId: deposit.body.id,
  };
  const freshQuote = async (body: Record<string, unknown>) =>
    (await quote(customer, { accountId: source.id, ...body })).id;
  const bodies: RouteSamples['bodies'] = {
    'POST /api/oauth/client/token': async () => ({ clientId: customer.clientId, clientSecret: customer.clientSecret }),
    'POST /api/accounts': async () => accountBody(),
    'POST /api/accounts/{accountId}/ubos': async () => uboBody(),
    'PATCH /api/accounts/{accountId}/ubos/{uboId}': async () => ({ name: 'Maria Souza' }),
    'POST /api/accounts/{accountId}/documents': async () => documentBody('CERTIFICATE_OF_INCORPORATION'),
    'POST /api/quotes': async () => ({
      accountId: source.id,
      sourceAsset: 'BRL',
      targetAsset: 'USD',
      sourceAmount: '100.00',
    }),
    'POST /api/operations/deposit': async () => ({
      accountId: source.id,
      quoteId: await freshQuote({ sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '5.00' }),
      fundingInstruction: { rail: 'PIX_KEY' },
    }),
    'POST /api/operations/swap': async () => ({
      accountId: source.id,
      quoteId: await freshQuote({ sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '1.00' }),
    }),
    'POST /api/operations/transfer': async () => ({
      sourceAccountId: source.id,
      targetAccountId: target.id,
      amount: { value: '0.01', asset: 'BRL' },
    }),
    'POST /api/operations/withdrawal': async () => ({
      accountId: source.id,
      quoteId: await freshQuote({ sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '1.00' }),
      beneficiary: {
        type: 'REFERENCE',
        id: ids.beneficiaryId,
        paymentInstruction: { type: 'REFERENCE', id: ids.instructionId },
      },
    }),
    'POST /api/beneficiaries': async () => beneficiaryBody(),
    'POST /api/beneficiaries/{beneficiaryId}/payment-instructions': async () =>
      pixInstruction('EMAIL', `${randomUUID()}@example.com`),
    'POST /api/sandbox/operations/{operationId}/inbound-payment': async () => ({
      amount: { value: '1.00', asset: 'BRL' },
    }),
  };
  return { ids, bodies };
}

/** A PIX deposit of 10.00 BRL into `accountId`, on a quote made for it: the body of POST /api/operations/deposit. */
export async function depositBody(customer: TestCustomer, accountId: string) {
  const { id } = await quote(customer, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '10.00' });
  return { accountId, quoteId: id, fundingInstruction: { rail: 'PIX_KEY' } };
}

/**
 * `op`'s path with its parameters filled from `ids` (a UBO's account is the pending one that has it), a random id
 * for a parameter it has none of, and `override`'s value for the parameter it names.
 */
export const samplePath = (
  op: OpenApiOperation,
  ids: Record<string, string>,
  override?: { name: string; value: string },
): string =>
  op.path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => {
    if (name === override?.name) return override.value;
    if (name === 'accountId' && op.path.includes('/ubos')) return ids.pendingAccountId;
    return ids[name] ?? randomUUID();
  });
