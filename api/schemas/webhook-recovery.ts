import { periodBoundSchema } from '../../domain/report-period';

// Recover (decision 0044): the window is checked by the service (INVALID_PERIOD).
export const recoverBody = {
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: {
    since: { ...periodBoundSchema, description: 'Inclusive; at most 14 days back. ' + periodBoundSchema.description },
    until: { ...periodBoundSchema, description: 'Exclusive; defaults to now. ' + periodBoundSchema.description },
  },
} as const;

export const recoverResponse = {
  type: 'object',
  required: ['count'],
  properties: { count: { type: 'integer', minimum: 0, description: 'Deliveries queued for one more attempt' } },
} as const;
