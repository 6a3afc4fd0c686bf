import { EntitySchema } from '@mikro-orm/core';
import { tenantFilter, timestamp } from './common';

/** A statement issued for a closed period; its JSON form, exactly as hashed, is stored in pieces under `bodyId`. */
export interface IssuedStatement {
  id: string;
  customerId: string;
  accountId: string;
  asset: string;
  periodStart: Date;
  periodEnd: Date;
  sha256: string;
  bodyId: string;
  createdAt: Date;
}

export const IssuedStatementSchema = new EntitySchema<IssuedStatement>({
  name: 'IssuedStatement',
  tableName: 'statements',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    customerId: { type: 'uuid' },
    accountId: { type: 'uuid' },
    asset: { type: 'string' },
    periodStart: { ...timestamp },
    periodEnd: { ...timestamp },
    sha256: { type: 'string', length: 64 },
    bodyId: { type: 'uuid' },
    createdAt: { ...timestamp },
  },
});
