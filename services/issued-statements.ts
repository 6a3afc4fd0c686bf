import type { Em } from '../db/orm';
import type { IssuedStatement } from '../db/entities/statement';
import { STATEMENT_LIST } from '../db/repositories/issued-statements';
import { ListQuery, Page, runList } from '../lists/run-list';
import { notFound } from '../domain/errors';
import type { StatementSource } from '../statements/statement';
import { issuedStatementSource, issuedStatementText } from '../statements/issued-body';

export async function listIssuedStatements(
  em: Em,
  query: ListQuery,
  cursorSecret: string,
): Promise<Page<IssuedStatement>> {
  return runList(em, STATEMENT_LIST, query, cursorSecret);
}

/**
 * An issued statement of the EntityManager's customer (another customer's is 404): its stored JSON text, streamed as
 * is, and the same statement as a source for the other formats; neither holds more than a piece or two of it.
 */
export async function getIssuedStatement(
  em: Em,
  id: string,
): Promise<{ json: () => AsyncIterable<string>; source: StatementSource }> {
  const source = await issuedStatementSource(em, id);
  if (!source) throw notFound('statement');
  return { json: () => issuedStatementText(em, id), source };
}
