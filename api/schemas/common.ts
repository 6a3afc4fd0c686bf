import { ref } from './responses';
import { ASSETS } from '../../domain/assets';

export const uuid = { type: 'string', format: 'uuid' } as const;
export const assetCode = { type: 'string', enum: [...ASSETS] } as const;
// Spec AmountValue. The `amount` format bounds its magnitude (INVALID_AMOUNT, domain/money.ts); the precision
// per asset is checked afterwards (INVALID_AMOUNT_PRECISION).
export const amountValue = {
  type: 'string',
  pattern: '^-?\\d+(\\.\\d+)?$',
  format: 'amount',
  description: 'Decimal string: optional minus, digits, optional dot and digits; at most 15 digits before the point.',
  examples: ['100.00'],
} as const;
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

// Free text is bounded and must hold something besides blanks, so stored records (and every event that copies
// them) stay small and meaningful.
export const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength, pattern: '\\S' }) as const;

// Birth and incorporation dates: a real calendar date from 1900 on (nobody alive or incorporated today is
// older); "not in the future" is the service's check, since a schema compiled at start-up cannot know today.
export const pastDate = { type: 'string', format: 'date', formatMinimum: '1900-01-01' } as const;

export const addressSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['addressLine1', 'city', 'country', 'postalCode'],
  properties: {
    addressLine1: text(200),
    addressLine2: text(200),
    city: text(100),
    state: text(100),
    // ISO 3166-1 alpha-2, upper case as the spec's examples write it.
    country: { type: 'string', pattern: '^[A-Z]{2}$' },
    postalCode: text(20),
  },
} as const;

/** A per-direction total of statements and reports: its sum is an `Amount`, as every response writes one. */
export const directionTotalOf = (minCount: 0 | 1) =>
  ({
    type: 'object',
    required: ['sum', 'count'],
    properties: { sum: ref('Amount'), count: { type: 'integer', minimum: minCount } },
  }) as const;
