import { EntitySchema } from '@mikro-orm/core';
import { tenantFilter, timestamp } from './common';

/** A statement issued for a closed period: its JSON form exactly as hashed (statements/issue.ts). */
export interface IssuedStatement {
  id: string;
  customerId: string;
  accountId: string;
  asset: string;
  periodStart: Date;
  periodEnd: Date;
  sha256: string;
  body: string;
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
    body: { type: 'text', lazy: true },
    createdAt: { ...timestamp },
  },
});
