import type { EntitySchemaMetadata } from '@mikro-orm/core';

// The history entry's shape is the domain's (domain/states.ts); entities store it as JSON.
export type { StateEntry } from '../../domain/states';

export interface Tag {
  key: string | null;
  value: string;
}

// Timestamps are written by the application with millisecond precision, so the (createdAt, id) keyset
// cursors handed to clients round-trip exactly.
export const timestamp = { type: 'Date', columnType: 'timestamptz(3)' } as const;

/**
 * Tenant isolation lives here, not in handlers: every customer-owned entity carries this filter, on by
 * default. A request's EntityManager sets `{ customerId }`; workers and operators set `{ system: true }`.
 * An EntityManager that sets neither fails loudly instead of reading across customers.
 */
export const tenantFilter: NonNullable<EntitySchemaMetadata<unknown>['filters']> = {
  tenant: {
    name: 'tenant',
    default: true,
    cond: (args: { customerId?: string; system?: boolean }) => {
      if (args.system) return {};
      if (!args.customerId) throw new Error('tenant filter needs a customerId or system scope');
      return { customerId: args.customerId };
    },
  },
};
