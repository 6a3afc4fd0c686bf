import type { Em } from '../../../db/orm';
import { AccountSchema, Operation, OperationSchema, QuoteSchema } from '../../../db/entities';
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

/** Presents operations with their quotes and account owners, loaded in two queries for the whole page. */
export async function presentOperations(em: Em, ops: Operation[]) {
  if (ops.length === 0) return [];
  const [quotes, accounts] = await Promise.all([
    em.find(QuoteSchema, { id: { $in: ops.map((o) => o.quoteId) } }),
    em.find(AccountSchema, { id: { $in: [...new Set(ops.map((o) => o.accountId))] } }, { fields: ['id', 'legalName'] }),
  ]);
  const quoteById = new Map(quotes.map((q) => [q.id, q]));
  const ownerById = new Map(accounts.map((a) => [a.id, a.legalName]));
  return ops.map((o) => presentOperation(o, quoteById.get(o.quoteId)!, ownerById.get(o.accountId) ?? ''));
}

export async function getOperation(em: Em, id: string) {
  const op = await em.findOne(OperationSchema, { id });
  if (!op) throw notFound('operation');
  return (await presentOperations(em, [op]))[0];
}

export async function listOperations(em: Em, query: ListQuery, cursorSecret: string) {
  const page = await runList(em, { entity: OperationSchema, from: 'operations o', alias: 'o', catalogue: OPERATION_FIELDS }, query, cursorSecret);
  return { data: await presentOperations(em, page.data), meta: page.meta };
}
