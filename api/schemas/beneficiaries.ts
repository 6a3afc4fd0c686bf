import { RELATIONSHIP_TYPES } from '../../db/entities/beneficiary';
import { addressSchema, assetCode, idParams, pastDate, text } from './common';
import { MAX_DECISION_REASON_LENGTH } from '../../domain/states';

// The check digits are verified by the service (VALIDATION_ERROR at /holder/taxId/value).
const taxIdOf = (type: 'CPF' | 'CNPJ') =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['value', 'type'],
    properties: { value: { type: 'string', minLength: 1, maxLength: 32 }, type: { type: 'string', enum: [type] } },
  }) as const;

const individualHolder = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'firstName', 'lastName', 'taxId', 'dateOfBirth', 'address'],
  properties: {
    type: { const: 'INDIVIDUAL' },
    firstName: text(100),
    lastName: text(100),
    taxId: taxIdOf('CPF'),
    // "In the past" is checked by the service: a schema cannot know today's date.
    dateOfBirth: pastDate,
    address: addressSchema,
  },
} as const;

// Not shown by the spec; ours mirrors the account owner: a legal name and a CNPJ (decision 0008).
const companyHolder = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'legalName', 'taxId', 'address'],
  properties: {
    type: { const: 'COMPANY' },
    legalName: text(200),
    taxId: taxIdOf('CNPJ'),
    address: addressSchema,
  },
} as const;

const whenType = (type: string, then: object) => ({
  if: { type: 'object', required: ['type'], properties: { type: { const: type } } },
  then,
});

// if/then rather than oneOf: a holder with one wrong field then gets that field's error, not a list of
// every way it fails to match the other variant.
export const holderSchema = {
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string', enum: ['INDIVIDUAL', 'COMPANY'] } },
  allOf: [whenType('INDIVIDUAL', individualHolder), whenType('COMPANY', companyHolder)],
} as const;

export const DICT_KEY_TYPES = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'EVP'] as const;

// The key itself is checked per type by the service (domain/dict-key.ts); 77 is the DICT's longest key.
const pixInstruction = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'asset', 'dictKeyType', 'dictKey'],
  properties: {
    type: { const: 'PIX' },
    asset: assetCode,
    dictKeyType: { type: 'string', enum: [...DICT_KEY_TYPES] },
    dictKey: { type: 'string', minLength: 1, maxLength: 77 },
  },
} as const;

// Beyond the spec (decision 0134): a stablecoin address on the deployment's chain. Its EIP-55 checksum and the
// network are checked by the service (400 naming the field).
const walletInstruction = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'asset', 'network', 'address'],
  properties: {
    type: { const: 'WALLET' },
    asset: assetCode,
    network: { type: 'string', minLength: 1, maxLength: 40, description: 'The chain: CRYPTO_NETWORK (ETHEREUM)' },
    address: {
      type: 'string',
      pattern: '^0x[0-9a-fA-F]{40}$',
      description: 'An EVM address; mixed case must be its EIP-55 checksum',
    },
  },
} as const;

export const paymentInstructionBody = {
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string', enum: ['PIX', 'WALLET'] } },
  allOf: [whenType('PIX', pixInstruction), whenType('WALLET', walletInstruction)],
} as const;

export const createBeneficiaryBody = {
  type: 'object',
  additionalProperties: false,
  required: ['holder', 'relationshipType', 'paymentInstruction'],
  properties: {
    holder: holderSchema,
    relationshipType: { type: 'string', enum: [...RELATIONSHIP_TYPES] },
    paymentInstruction: paymentInstructionBody,
  },
} as const;

export const instructionReviewBody = {
  type: 'object',
  additionalProperties: false,
  required: ['decision'],
  properties: { decision: { type: 'string', enum: ['APPROVE', 'REJECT'] }, reason: text(MAX_DECISION_REASON_LENGTH) },
} as const;

export const beneficiaryParams = idParams('beneficiaryId');
export const instructionParams = idParams('instructionId');
