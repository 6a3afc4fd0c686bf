import type { Em } from '../../db/orm';
import type { IssuedStatement } from '../../db/entities/statement';
import { readIssuedStatement, STATEMENT_LIST } from '../../db/repositories/issued-statements';
import { ListQuery, runList } from '../../lists/run-list';
import { notFound } from '../errors';
import type { StatementEntry, StatementHeader, StatementSource } from '../../statements/statement';

export function presentIssuedStatement(s: IssuedStatement) {
  return {
    id: s.id,
    accountId: s.accountId,
    asset: s.asset,
    periodStart: s.periodStart.toISOString(),
    periodEnd: s.periodEnd.toISOString(),
    sha256: s.sha256,
    createdAt: s.createdAt.toISOString(),
  };
}

export async function listIssuedStatements(em: Em, query: ListQuery, cursorSecret: string) {
  const page = await runList(em, STATEMENT_LIST, query, cursorSecret);
  return { data: page.data.map(presentIssuedStatement), meta: page.meta };
}

/**
 * An issued statement of the EntityManager's customer (another customer's is 404): its stored JSON text, returned
 * as is, and the same statement as a source for the other formats.
 */
export async function getIssuedStatement(em: Em, id: string): Promise<{ json: string; source: StatementSource }> {
  const found = await readIssuedStatement(em, id);
  if (!found) throw notFound('statement');
  const parsed = JSON.parse(found.body) as StatementHeader & { entries: StatementEntry[] };
  const { entries, ...rest } = parsed;
  const header: StatementHeader = {
    id: rest.id,
    accountId: rest.accountId,
    asset: rest.asset,
    periodStart: rest.periodStart,
    periodEnd: rest.periodEnd,
    openingBalance: rest.openingBalance,
    closingBalance: rest.closingBalance,
  };
  return { json: found.body, source: { header, entries: fromArray(entries) } };
}

async function* fromArray(entries: StatementEntry[]): AsyncGenerator<StatementEntry> {
  yield* entries;
}
