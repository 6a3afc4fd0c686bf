import { RAILS } from '../../rails/funding';
import { amountObject, uuid } from './common';
import { END_TO_END_ID_PATTERN } from '../../domain/end-to-end-ids';

export const depositBody = {
  type: 'object',
  additionalProperties: false,
  required: ['accountId', 'quoteId', 'fundingInstruction'],
  properties: {
    accountId: uuid,
    quoteId: uuid,
    fundingInstruction: {
      type: 'object',
      additionalProperties: false,
      required: ['rail'],
      properties: { rail: { type: 'string', enum: [...RAILS] } },
    },
  },
};

const referenceBeneficiary = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'id', 'paymentInstruction'],
  properties: {
    type: { const: 'REFERENCE' },
    id: uuid,
    paymentInstruction: {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id'],
      properties: { type: { const: 'REFERENCE' }, id: uuid },
    },
  },
};

export const withdrawalBody = {
  type: 'object',
  additionalProperties: false,
  required: ['accountId', 'quoteId', 'beneficiary'],
  properties: {
    accountId: uuid,
    quoteId: uuid,
    // INLINE is recognised whatever else it carries, so the answer is the spec's INLINE_BENEFICIARY_NOT_SUPPORTED
    // rather than a schema error about its fields.
    beneficiary: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: ['REFERENCE', 'INLINE'] } },
      if: { properties: { type: { const: 'INLINE' } } },
      then: {},
      else: referenceBeneficiary,
    },
  },
};

export const swapBody = {
  type: 'object',
  additionalProperties: false,
  required: ['accountId', 'quoteId'],
  properties: { accountId: uuid, quoteId: uuid },
};

export const transferBody = {
  type: 'object',
  additionalProperties: false,
  required: ['sourceAccountId', 'targetAccountId', 'amount'],
  properties: { sourceAccountId: uuid, targetAccountId: uuid, amount: amountObject, quoteId: uuid },
};

export const inboundPaymentBody = {
  type: 'object',
  additionalProperties: false,
  required: ['amount'],
  properties: {
    amount: amountObject,
    endToEndId: { type: 'string', minLength: 1, maxLength: 64, pattern: END_TO_END_ID_PATTERN },
    payerTaxId: {
      type: 'string',
      // Letters too: an alphanumeric CNPJ (IN RFB 2.229/2024) is its owner's tax id as much as a numeric one.
      pattern: '^[0-9A-Za-z./-]{11,18}$',
      description:
        "TED with a bank: the CNPJ or CPF the TED comes from, the owner of one of the customer's own accounts " +
        "(another is 400 VALIDATION_ERROR; default: the deposit's `payerTaxId`)",
    },
  },
};

export const decisionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['decision'],
  properties: {
    decision: { type: 'string', enum: ['APPROVE', 'REJECT'] },
    reason: { type: 'string', minLength: 1, maxLength: 500 },
  },
};
