// A WALLET instruction's events (decision 0134: "the webhook payload likewise" shows `{rail: CRYPTO, type: WALLET,
// network, address}`), against the catalogue /openapi.json publishes: the body of a CRYPTO withdrawal's operation
// events and of a WALLET instruction's beneficiary events, as webhooks/*-event.ts build them, must validate against
// their documented schema, and say WALLET, never PIX.
import { expect } from 'chai';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { loadConfig } from '../../config';
import { openApiDocument } from '../../api/openapi';
import { DEFAULT_VERSION, VERSIONS } from '../../api/versions';
import type { ServiceContext } from '../../services/context';
import type { Beneficiary, Operation, PaymentInstruction } from '../../db/entities';
import { Dec } from '../../domain/money';
import { operationEventPayload } from '../../webhooks/operation-event';
import { instructionEventPayload } from '../../webhooks/beneficiary-event';

const at = new Date('2026-12-04T12:00:00.000Z');
const address = { addressLine1: 'Rua A, 1', city: 'São Paulo', state: 'SP', country: 'BR', postalCode: '01000-000' };
const holder = {
  type: 'INDIVIDUAL',
  firstName: 'Ana',
  lastName: 'Silva',
  taxId: { type: 'CPF', value: '52998224725' },
  dateOfBirth: '1990-01-01',
  address,
};
const wallet = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const state = { status: 'APPROVED', createdAt: at.toISOString() };

const beneficiary: Beneficiary = {
  id: '7f1c7f8e-2f1a-4a57-9a43-3b1f5c0e8b11',
  customerId: '0b8a9f44-6c44-4d0f-8f36-5d6f0d9f1a22',
  holder,
  relationshipType: 'THIRD_PARTY',
  createdAt: at,
  updatedAt: at,
};

const instruction: PaymentInstruction = {
  id: '3e9d4c1a-8b7f-4f0e-9d2c-1a2b3c4d5e66',
  beneficiaryId: beneficiary.id,
  customerId: beneficiary.customerId,
  asset: 'USDC',
  rail: 'CRYPTO',
  dictKeyType: 'WALLET',
  dictKey: wallet,
  network: 'ETHEREUM',
  status: 'APPROVED',
  states: [state],
  createdAt: at,
  updatedAt: at,
};

/** A withdrawal to that WALLET instruction, as services/operations/withdrawal.ts writes its intent. */
function cryptoWithdrawal(paymentInstruction: Record<string, unknown>): Operation {
  return {
    id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    customerId: beneficiary.customerId,
    accountId: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
    type: 'WITHDRAWAL',
    status: 'REQUESTED',
    states: [{ status: 'REQUESTED', createdAt: at.toISOString() }],
    intent: { type: 'WITHDRAWAL', beneficiary: { id: beneficiary.id, holder, paymentInstruction } },
    quoteId: 'd4c3b2a1-0f9e-4d8c-b7a6-5f4e3d2c1b0a',
    quoteRef: {
      id: 'd4c3b2a1-0f9e-4d8c-b7a6-5f4e3d2c1b0a',
      effectiveRate: { value: '1', base: 'USDC', quote: 'USDC' },
      expiresAt: at.toISOString(),
      consumedAt: at.toISOString(),
    },
    accountOwner: 'Acme Ltda',
    sourceAsset: 'USDC',
    sourceAmount: new Dec('10'),
    targetAsset: 'USDC',
    targetAmount: new Dec('10'),
    targetAccountId: null,
    fees: [],
    transactions: [],
    tags: [],
    createdAt: at,
    updatedAt: at,
  } as Operation;
}

describe('WALLET instructions in webhook payloads (decision 0134, /openapi.json webhooks)', () => {
  const services = { config: { ...loadConfig(), sandbox: true } } as ServiceContext;
  const doc = openApiDocument(
    VERSIONS.get(DEFAULT_VERSION)!.routes(services),
    DEFAULT_VERSION,
    'http://127.0.0.1:3000',
    'http://127.0.0.1:3000/api/oauth/client/token',
  );
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
  const validator = (type: string) =>
    ajv.getSchema(`openapi.json#/webhooks/${type}/post/requestBody/content/application~1json/schema`)!;

  it("a CRYPTO withdrawal's operation event names the WALLET it pays, as its documented schema says", () => {
    const payloads = [
      // As the withdrawal's intent records it now, and as rows written before it named the network.
      cryptoWithdrawal({ id: instruction.id, rail: 'CRYPTO', keyType: 'WALLET', key: wallet, network: 'ETHEREUM' }),
      cryptoWithdrawal({ id: instruction.id, rail: 'CRYPTO', keyType: 'WALLET', key: wallet }),
    ].map((op) => JSON.parse(JSON.stringify(operationEventPayload(op, at))));
    const shown = { type: 'WALLET', rail: 'CRYPTO', network: 'ETHEREUM', address: wallet };
    expect(payloads[0].intent.beneficiary.instruction.address).to.deep.equal(shown);
    const { network: _recordedBefore, ...withoutNetwork } = shown;
    expect(payloads[1].intent.beneficiary.instruction.address).to.deep.equal(withoutNetwork);
    for (const payload of payloads) {
      for (const type of ['OPERATION_REQUESTED', 'OPERATION_COMPLETED', 'OPERATION_FAILED']) {
        const validate = validator(type);
        expect(validate(payload), `${type}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
      }
    }
  });

  it("a WALLET instruction's beneficiary events validate against their documented schema", () => {
    const payload = JSON.parse(JSON.stringify(instructionEventPayload(beneficiary, instruction, at)));
    expect(payload.instruction.address).to.deep.equal({
      type: 'WALLET',
      rail: 'CRYPTO',
      network: 'ETHEREUM',
      address: wallet,
    });
    for (const type of [
      'BENEFICIARY_PAYMENT_INSTRUCTION_CREATED',
      'BENEFICIARY_PAYMENT_INSTRUCTION_APPROVED',
      'BENEFICIARY_PAYMENT_INSTRUCTION_REJECTED',
    ]) {
      const validate = validator(type);
      expect(validate(payload), `${type}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
    }
  });

  it('a PIX key keeps its shape in both', () => {
    const pix = { id: instruction.id, rail: 'PIX_KEY', keyType: 'EMAIL', key: 'ana@example.com' };
    const op = { ...cryptoWithdrawal(pix), sourceAsset: 'BRL', targetAsset: 'BRL' } as Operation;
    const payload = JSON.parse(JSON.stringify(operationEventPayload(op, at)));
    expect(payload.intent.beneficiary.instruction.address).to.deep.equal({
      type: 'PIX',
      rail: 'PIX_KEY',
      keyType: 'EMAIL',
      key: 'ana@example.com',
    });
    const validate = validator('OPERATION_COMPLETED');
    expect(validate(payload), ajv.errorsText(validate.errors)).to.equal(true);
  });
});
