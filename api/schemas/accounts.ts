// Ajv schemas of the account endpoints (strict: no unknown properties, no coercion). Rules Ajv cannot express
// (tax id check digits, unique asset codes, base64 content size) are checked in services/accounts.ts
// with the same VALIDATION_ERROR shape.
import { ASSETS } from '../../domain/assets';
import { DOCUMENT_TYPES } from '../../domain/requirements';
import { addressSchema, pastDate, text } from './common';
import { MAX_REASON_LENGTH } from '../../domain/states';

export const INDUSTRIES = [
  'AGRICULTURE',
  'CONSTRUCTION',
  'EDUCATION',
  'ENERGY',
  'FINANCIAL_SERVICES',
  'HEALTHCARE',
  'HOSPITALITY',
  'MANUFACTURING',
  'MEDIA',
  'NON_PROFIT',
  'PROFESSIONAL_SERVICES',
  'REAL_ESTATE',
  'RETAIL',
  'TECHNOLOGY',
  'TRANSPORTATION',
  'WHOLESALE',
  'OTHER',
] as const;

const uuid = { type: 'string', format: 'uuid' } as const;

export const taxIdSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['value', 'type'],
  properties: { value: text(32), type: { type: 'string', enum: ['CPF', 'CNPJ'] } },
} as const;

const ownershipPercentage = { type: 'number', minimum: 0, maximum: 100 } as const;

export const createAccountBody = {
  type: 'object',
  additionalProperties: false,
  required: ['assets', 'owner'],
  properties: {
    assets: {
      type: 'array',
      minItems: 1,
      maxItems: ASSETS.length,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['code', 'isVirtual'],
        properties: { code: { type: 'string', enum: [...ASSETS] }, isVirtual: { type: 'boolean' } },
      },
    },
    owner: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'legalName', 'taxId', 'industry', 'incorporateDate', 'address'],
      properties: {
        type: { type: 'string', enum: ['COMPANY'] },
        legalName: text(200),
        taxId: taxIdSchema,
        industry: { type: 'string', enum: [...INDUSTRIES] },
        incorporateDate: pastDate,
        address: addressSchema,
      },
    },
  },
} as const;

export const createUboBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'taxId', 'address'],
  properties: { name: text(200), taxId: taxIdSchema, address: addressSchema, ownershipPercentage },
} as const;

// An empty patch is almost certainly a client bug, so at least one field must be named.
export const patchUboBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: text(200),
    taxId: taxIdSchema,
    address: addressSchema,
    ownershipPercentage: { anyOf: [ownershipPercentage, { type: 'null' }] },
  },
} as const;

export const uploadDocumentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['documentType', 'fileName', 'contentType', 'content'],
  properties: {
    documentType: { type: 'string', enum: [...DOCUMENT_TYPES] },
    uboId: uuid,
    fileName: text(255),
    // type/subtype as in RFC 6838, optionally with parameters.
    contentType: {
      type: 'string',
      maxLength: 255,
      pattern: '^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(;.*)?$',
    },
    // Size and alphabet are checked after decoding (the service), not here: a 7 MiB string through Ajv is slow.
    content: { type: 'string', minLength: 1 },
  },
} as const;

export const reviewDecisionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['decision'],
  properties: { decision: { type: 'string', enum: ['APPROVE', 'REJECT'] }, reason: text(MAX_REASON_LENGTH) },
} as const;

export const accountParams = {
  type: 'object',
  required: ['accountId'],
  properties: { accountId: uuid },
} as const;

export const uboParams = {
  type: 'object',
  required: ['accountId', 'uboId'],
  properties: { accountId: uuid, uboId: uuid },
} as const;
