import { ASSETS } from '../../domain/assets';

export const uuid = { type: 'string', format: 'uuid' } as const;
export const assetCode = { type: 'string', enum: [...ASSETS] } as const;
// Spec AmountValue: the precision per asset is checked afterwards (INVALID_AMOUNT_PRECISION).
export const amountValue = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$', maxLength: 40 } as const;
export const amountObject = {
  type: 'object',
  additionalProperties: false,
  required: ['value', 'asset'],
  properties: { value: amountValue, asset: assetCode },
} as const;

export const idParams = (...names: string[]) => ({
  type: 'object',
  required: names,
  properties: Object.fromEntries(names.map((n) => [n, uuid])),
});
