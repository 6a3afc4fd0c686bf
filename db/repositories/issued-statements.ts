// Issued statements: the stored JSON form of each closed period's statement (in pieces, `statement_chunks`), its
// list, and the accounts a period issues for. How it reaches Postgres: MikroORM's list runner for the list
// (lists.ts), hand-written statements through em.execute for the rest. Tenant: reads take the customer from the
// EntityManager's scope (`tenantOf`), a body's pieces through the statement row that names them; `accountsToIssue`,
// the body writes and `storeIssuedStatement` are the worker's and act across customers (systemEm), each statement row
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

/** Pieces `from`.. of the body of an issued statement of the scope's customer, in order, at most `limit`. */
export async function issuedStatementPieces(
  em: Em,
  id: string,
  from: number,
  limit: number,
): Promise<Array<{ n: number; text: string }>> {
  return (await em.execute(
    `select c.n, c.text from statements s join statement_chunks c on c.body_id = s.body_id
     where s.id = ? and s.customer_id = ? and c.n >= ? order by c.n limit ?`,
    [id, tenantOf(em), from, limit],
  )) as Array<{ n: number; text: string }>;
}

/** The first and the last piece of the body of an issued statement of the scope's customer (the same when one). */
export async function issuedStatementEnds(em: Em, id: string): Promise<{ first: string; last: string } | null> {
  const rows = (await em.execute(
    `select c.n, c.text from statements s join statement_chunks c on c.body_id = s.body_id
     where s.id = ? and s.customer_id = ?
       and (c.n = 0 or c.n = (select max(m.n) from statement_chunks m where m.body_id = s.body_id))
     order by c.n`,
    [id, tenantOf(em)],
  )) as Array<{ n: number; text: string }>;
  if (rows.length === 0) return null;
  return { first: rows[0].text, last: rows[rows.length - 1].text };
}

/**
 * Writes one piece of a body being issued, in a transaction of its own: the body is not anyone's until its statement
 * row commits (storeIssuedStatement), so a half-written one is never read.
 */
export async function storeStatementPiece(em: Em, bodyId: string, n: number, text: string): Promise<void> {
  await em.execute(
    'insert into statement_chunks (body_id, n, text, created_at) values (?, ?, ?, now()) on conflict do nothing',
    [bodyId, n, text],
  );
}

/** Drops a body that no statement row names (an issuing that lost the race for its row). */
export async function dropStatementBody(em: Em, bodyId: string): Promise<void> {
  await em.execute(
    `delete from statement_chunks c
     where c.body_id = ? and not exists (select 1 from statements s where s.body_id = ?)`,
    [bodyId, bodyId],
  );
}

/**
 * Drops bodies no statement row names, written before `before`: what an issuing that died mid-write left. The bound
 * keeps a body being written now (by a run still going) out of reach.
 */
export async function purgeOrphanStatementBodies(em: Em, before: Date): Promise<number> {
  const rows = await em.execute(
    `delete from statement_chunks c where c.created_at < ?
       and not exists (select 1 from statements s where s.body_id = c.body_id) returning 1`,
    [before],
  );
  return rows.length;
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

/**
 * The end of the last period issued for each account-asset of `accountIds` (key `{accountId}:{asset}`); an
 * account-asset never issued has no entry. One read of the account index per page of accounts.
 */
export async function lastIssuedPeriodEnds(em: Em, accountIds: string[]): Promise<Map<string, Date>> {
  const rows = (await em.execute(
    `select distinct on (account_id, asset) account_id, asset, period_end from statements
     where account_id = any(string_to_array(?, ',')::uuid[]) order by account_id, asset, period_start desc`,
    [accountIds.join(',')],
  )) as Array<{ account_id: string; asset: string; period_end: Date | string }>;
  return new Map(rows.map((r) => [`${r.account_id}:${r.asset}`, new Date(r.period_end)]));
}

/** Whether the statement was issued already (a second issuing skips building it). */
export async function isIssued(em: Em, id: string): Promise<boolean> {
  return (await em.execute('select 1 from statements where id = ?', [id])).length > 0;
}

/**
 * Stores an issued statement (its body already written under `bodyId`) and its event in one transaction; a statement
 * stored before (same id: same account, asset and period) inserts nothing and records no second event. True when
 * this call stored it.
 */
export async function storeIssuedStatement(
  em: Em,
  queues: DeliveryQueues,
  s: Omit<IssuedStatement, 'createdAt'>,
  event: NewEvent,
): Promise<boolean> {
  return inTransaction(em, async (tx) => {
    const inserted = await tx.execute(
      `insert into statements (id, customer_id, account_id, asset, period_start, period_end, sha256, body_id,
         created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, now()) on conflict (id) do nothing returning id`,
      [s.id, s.customerId, s.accountId, s.asset, s.periodStart, s.periodEnd, s.sha256, s.bodyId],
    );
    if (inserted.length === 0) return false;
    const batch = new SqlBatch();
    addEvent(batch, queues, event);
    await batch.run(tx);
    return true;
  });
}
