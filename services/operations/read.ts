import type { Em } from '../../db/orm';
import { findOperation, OPERATION_LIST } from '../../db/repositories/operations';
import { notFound } from '../../api/errors';
import { ListQuery, runList } from '../../lists/run-list';
import { presentOperation } from '../../api/presenters/operation';

/** The scope's operation, or 404: what a client waiting for an operation polls. */
export async function loadOperation(em: Em, id: string) {
  const op = await findOperation(em, id);
  if (!op) throw notFound('operation');
  return op;
}

export async function getOperation(em: Em, id: string) {
  return presentOperation(await loadOperation(em, id));
}

export async function listOperations(em: Em, query: ListQuery, cursorSecret: string) {
  const page = await runList(em, OPERATION_LIST, query, cursorSecret);
  return { data: page.data.map(presentOperation), meta: page.meta };
}
