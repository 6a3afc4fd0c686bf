import type { Em } from '../../../db/orm';
import { OperationSchema } from '../../../db/entities';
import { findOperation } from '../../../db/repositories/operations';
import { OPERATION_STATUSES, OPERATION_TYPES } from '../../../db/entities/operation';
import { ASSETS } from '../../../domain/assets';
import { notFound } from '../../errors';
import type { FieldCatalogue } from '../../../domain/list-filters';
import { ListQuery, runList } from '../../../lists/run-list';
import { presentOperation } from '../../presenters/operation';

// docs/decisions.md: the filterable fields of GET /api/operations.
const OPERATION_FIELDS: FieldCatalogue = {
  'intent.type': { type: 'enum', values: OPERATION_TYPES, sql: 'o.type' },
  'currentState.status': { type: 'enum', values: OPERATION_STATUSES, sql: 'o.status' },
  'account.id': { type: 'uuid', sql: 'o.account_id' },
  'sourceAmount.asset': { type: 'enum', values: ASSETS, sql: 'o.source_asset' },
  'targetAmount.asset': { type: 'enum', values: ASSETS, sql: 'o.target_asset' },
  createdAt: { type: 'timestamp', sql: 'o.created_at' },
  'tags.key': { type: 'string', jsonArray: 'o.tags', prop: 'key' },
  'tags.value': { type: 'string', jsonArray: 'o.tags', prop: 'value' },
};

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
  const page = await runList(em, { entity: OperationSchema, from: 'operations o', alias: 'o', catalogue: OPERATION_FIELDS }, query, cursorSecret);
  return { data: page.data.map(presentOperation), meta: page.meta };
}
