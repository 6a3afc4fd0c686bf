// Issued statements: the stored JSON form of each closed period's statement, its list, and the accounts a period
// issues for. How it reaches Postgres: MikroORM's list runner for the list (lists.ts), hand-written statements
// through em.execute for the rest. Tenant: reads take the customer from the EntityManager's scope (`tenantOf`);
// `accountsToIssue` and `storeIssuedStatement` are the worker's and act across customers (systemEm), each row
// carrying its account's customer.
import { Em, tenantOf } from '../orm';
import { IssuedStatement, IssuedStatementSchema } from '../entities/statement';
import type { FieldCatalogue } from '../../domain/list-filters';
import type { ListResource } from './lists';
import { addEvent, type DeliveryQueues } from './events';
import { SqlBatch } from '../batch';
import { inTransaction } from '../transaction';

type NewEvent = Parameters<typeof addEvent>[2];

export const STATEMENT_LIST: ListResource<IssuedStatement> = {
  entity: IssuedStatementSchema,
  from: 'statements s',
  alias: 's',
  catalogue: {
    'account.id': { type: 'uuid', sql: 's.account_id' },
    asset: { type: 'string', sql: 's.asset' },
    periodStart: { type: 'timestamp', sql: 's.period_start' },
    createdAt: { type: 'timestamp', sql: 's.created_at' },
  } satisfies FieldCatalogue,
};

/** An issued statement of the scope's customer with its stored JSON text, or null. */
export async function readIssuedStatement(em: Em, id: string): Promise<{ row: IssuedStatement; body: string } | null> {
  const rows = (await em.execute(
    `select id, customer_id, account_id, asset, period_start, period_end, sha256, body, created_at from statements
     where id = ? and customer_id = ?`,
    [id, tenantOf(em)],
  )) as Array<Record<string, unknown>>;
  const r = rows[0];
  if (!r) return null;
  const row: IssuedStatement = {
    id: r.id as string,
    customerId: r.customer_id as string,
    accountId: r.account_id as string,
    asset: r.asset as string,
    periodStart: new Date(r.period_start as string),
    periodEnd: new Date(r.period_end as string),
    sha256: r.sha256 as string,
    body: r.body as string,
    createdAt: new Date(r.created_at as string),
  };
  return { row, body: row.body };
}

export interface AccountToIssue {
  id: string;
  customerId: string;
  assets: string[];
}

/**
 * Across customers: accounts opened before `before` with their enabled (ACTIVE) assets, after `afterId` in id
 * order, `limit` at a time.
 */
export async function accountsToIssue(
  em: Em,
  before: Date,
  afterId: string | null,
  limit: number,
): Promise<AccountToIssue[]> {
  const rows = (await em.execute(
    `select a.id, a.customer_id,
       coalesce((select json_agg(x->>'asset' order by x->>'asset') from jsonb_array_elements(a.assets) x
                 where x->>'status' = 'ACTIVE'), '[]'::json) as assets
     from accounts a where a.created_at < ? and a.id > ? order by a.id limit ?`,
    [before, afterId ?? '00000000-0000-0000-0000-000000000000', limit],
  )) as Array<{ id: string; customer_id: string; assets: string[] | string }>;
  return rows.map((r) => ({
    id: r.id,
    customerId: r.customer_id,
    assets: typeof r.assets === 'string' ? (JSON.parse(r.assets) as string[]) : r.assets,
  }));
}

/** Whether the statement was issued already (a second issuing skips building it). */
export async function isIssued(em: Em, id: string): Promise<boolean> {
  return (await em.execute('select 1 from statements where id = ?', [id])).length > 0;
}

/**
 * Stores an issued statement and its event in one transaction; a statement stored before (same id: same account,
 * asset and period) inserts nothing and records no second event. True when this call stored it.
 */
export async function storeIssuedStatement(
  em: Em,
  queues: DeliveryQueues,
  s: Omit<IssuedStatement, 'createdAt'>,
  event: NewEvent,
): Promise<boolean> {
  return inTransaction(em, async (tx) => {
    const inserted = await tx.execute(
      `insert into statements (id, customer_id, account_id, asset, period_start, period_end, sha256, body, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, now()) on conflict (id) do nothing returning id`,
      [s.id, s.customerId, s.accountId, s.asset, s.periodStart, s.periodEnd, s.sha256, s.body],
    );
    if (inserted.length === 0) return false;
    const batch = new SqlBatch();
    addEvent(batch, queues, event);
    await batch.run(tx);
    return true;
  });
}
