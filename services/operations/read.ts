import type { Em } from '../../db/orm';
import { findOperation, OPERATION_LIST } from '../../db/repositories/operations';
import { notFound } from '../../domain/errors';
import { ListQuery, Page, runList } from '../../lists/run-list';
import type { Operation } from '../../db/entities';

/** The scope's operation, or 404: what a client waiting for an operation polls. */
export async function loadOperation(em: Em, id: string) {
  const op = await findOperation(em, id);
  if (!op) throw notFound('operation');
  return op;
}

export async function getOperation(em: Em, id: string): Promise<Operation> {
  return loadOperation(em, id);
}

export async function listOperations(em: Em, query: ListQuery, cursorSecret: string): Promise<Page<Operation>> {
  return runList(em, OPERATION_LIST, query, cursorSecret);
}
