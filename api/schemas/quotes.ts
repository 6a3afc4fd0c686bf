import { amountValue, assetCode, uuid } from './common';

export const createQuoteBody = {
  type: 'object',
  additionalProperties: false,
  required: ['accountId', 'sourceAsset', 'targetAsset'],
  properties: {
    accountId: uuid,
    sourceAsset: assetCode,
    targetAsset: assetCode,
    sourceAmount: amountValue,
    targetAmount: amountValue,
  },
  // Exactly one of the two amounts (spec).
  oneOf: [{ required: ['sourceAmount'] }, { required: ['targetAmount'] }],
};
