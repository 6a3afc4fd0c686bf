import { Em, tenantOf } from '../../../db/orm';
import { entityFromRow, selectColumns } from '../../../db/rows';
import { queryRows, statementName } from '../../../db/raw';
import { OperationSchema } from '../../../db/entities';
import { OPERATION_STATUSES, OPERATION_TYPES } from '../../../db/entities/operation';
import { ASSETS } from '../../../domain/assets';
import { notFound } from '../../errors';
import type { FieldCatalogue } from '../../lists/filter-fields';
import { ListQuery, runList } from '../../lists/run-list';
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

/** A client waiting for an operation polls this: one plain select, the tenant condition from the em's scope. */
export async function getOperation(em: Em, id: string) {
  const sql = `select ${selectColumns(em, OperationSchema, 'o')} from operations o where o.id = ? and o.customer_id = ?`;
  const [row] = await queryRows<Record<string, unknown>>(em, sql, [id, tenantOf(em)], { prepared: statementName(sql) });
  if (!row) throw notFound('operation');
  return presentOperation(entityFromRow(em, OperationSchema, row));
}

export async function listOperations(em: Em, query: ListQuery, cursorSecret: string) {
  const page = await runList(em, { entity: OperationSchema, from: 'operations o', alias: 'o', catalogue: OPERATION_FIELDS }, query, cursorSecret);
  return { data: page.data.map(presentOperation), meta: page.meta };
}
