// Operations: the read of one operation, its creation and its steps' write-back. How it reaches Postgres:
// hand-written statements on the hot path (the create, a client's GET polled every 50 ms, each workflow step):
// the creation's reads and writes as two batches (db/batch.ts), the GET through db/raw.ts (`queryRows`, prepared,
// named columns), a step's lock through em.execute. Rows become plain entity objects (db/rows.ts) and go back by
// these statements, never through a flush. Tenant: customer-facing functions take the customer from the
// EntityManager's scope (`tenantOf`); `lockOperationForStep` is the worker's, system-wide, by an operation id
// its workflow carries.
import { Account, AccountSchema, Operation, OperationSchema, Quote, QuoteSchema } from '../entities';
import { Em, tenantOf } from '../orm';
import { queryRows, statementName } from '../raw';
import { entityFromRow, selectColumns } from '../rows';
import { SqlBatch } from '../batch';
import { addCustomerBacklog, type Backlog } from './operation-backlog';
import { OPERATION_STATUSES, OPERATION_TYPES } from '../entities/operation';
import { ASSETS } from '../../domain/assets';
import type { FieldCatalogue } from '../../domain/list-filters';
import type { ListResource } from './lists';

/** The scope's operation `id`, read past the identity map (a poller sees what a workflow wrote meanwhile). */
export async function findOperation(em: Em, id: string): Promise<Operation | undefined> {
  const sql = `select ${selectColumns(em, OperationSchema, 'o')} from operations o
    where o.id = ? and o.customer_id = ?`;
  const [row] = await queryRows<Record<string, unknown>>(em, sql, [id, tenantOf(em)], { prepared: statementName(sql) });
  return row ? entityFromRow(em, OperationSchema, row) : undefined;
}

/**
 * A workflow step's operation, its row locked until COMMIT (`FOR UPDATE`): steps of one operation queue behind
 * each other. System-wide: the id comes from the workflow, which the customer's request created.
 */
export async function lockOperationForStep(em: Em, id: string): Promise<Operation | undefined> {
  const [row] = await em.execute(
    `select ${selectColumns(em, OperationSchema, 'o')} from operations o where o.id = ? for update`,
    [id],
  );
  return row ? entityFromRow(em, OperationSchema, row) : undefined;
}

/** The instruction fields that name a deposit's charge: PIX's txid, BOLETO's seuNumero (rails/registry.ts). */
const CHARGE_FIELDS = { txid: 'txid', seuNumero: 'seuNumero' } as const;
export type ChargeField = keyof typeof CHARGE_FIELDS;

/**
 * The deposit a charge was created for, by its id (PIX: the txid; BOLETO: the seuNumero), across customers: a
 * notice from the provider names the charge, not the customer. The unique indexes `operations_deposit_txid_unique`
 * and `operations_deposit_seu_numero_unique` make it one deposit at most.
 */
export async function depositOfCharge(
  em: Em,
  chargeId: string,
  field: ChargeField = 'txid',
): Promise<{ id: string; customerId: string } | undefined> {
  // The field is one of two names (never input), each with its unique expression index: the statement names it.
  const [row] = await em.execute<{ id: string; customer_id: string }[]>(
    `select o.id, o.customer_id from operations o
     where o.type = 'DEPOSIT' and (o.intent -> 'fundingInstruction' ->> '${CHARGE_FIELDS[field]}') = ?`,
    [chargeId],
  );
  return row ? { id: row.id, customerId: row.customer_id } : undefined;
}

/** What an operation's creation reads, in one round trip (see `readCreateInputs`). */
export interface CreateInputs {
  accounts: Account[];
  /** The named quote, locked; undefined when not named or not the scope's. */
  quote?: Quote;
  /** The customer's backlog, when asked for (`backlogUpTo`): what admission checks. */
  backlog?: Backlog;
}

/**
 * The accounts the operation names and, when it names one, its quote locked (`FOR UPDATE`, so two operations on
 * one quote queue and the second sees it consumed), and with `backlogUpTo` the customer's backlog counted up to it
 * (admission), all in the scope's customer, in one round trip.
 */
export async function readCreateInputs(
  em: Em,
  accountIds: string[],
  quoteId?: string,
  opts: { backlogUpTo?: number } = {},
): Promise<CreateInputs> {
  const customerId = tenantOf(em);
  const batch = new SqlBatch();
  const backlog = opts.backlogUpTo === undefined ? undefined : addCustomerBacklog(batch, em, opts.backlogUpTo);
  const accounts = batch.add(
    `select ${selectColumns(em, AccountSchema, 'a')} from accounts a
     where a.customer_id = ? and a.id in (${accountIds.map(() => '?').join(', ')})`,
    [customerId, ...accountIds],
  );
  const quotes = quoteId
    ? batch.add(
        `select ${selectColumns(em, QuoteSchema, 'q')} from quotes q where q.id = ? and q.customer_id = ? for update`,
        [quoteId, customerId],
      )
    : undefined;
  await batch.run(em);
  return {
    accounts: accounts.rows.map((r) => entityFromRow(em, AccountSchema, r)),
    quote: quotes?.rows[0] ? entityFromRow(em, QuoteSchema, quotes.rows[0]) : undefined,
    backlog: backlog?.(),
  };
}

/** The new operation's row, as a statement of the creation's batch (its customer read in the caller's scope). */
export function addOperation(batch: SqlBatch, op: Operation): void {
  const json = (v: unknown) => JSON.stringify(v);
  batch.add(
    `insert into operations (id, customer_id, account_id, type, status, states, intent, quote_id, quote_ref,
       account_owner, source_asset, source_amount, target_asset, target_amount, target_account_id, fees,
       transactions, tags, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?, ?)`,
    [
      op.id,
      op.customerId,
      op.accountId,
      op.type,
      op.status,
      json(op.states),
      json(op.intent),
      op.quoteId,
      json(op.quoteRef),
      op.accountOwner,
      op.sourceAsset,
      op.sourceAmount.toFixed(),
      op.targetAsset,
      op.targetAmount.toFixed(),
      op.targetAccountId,
      json(op.fees),
      json(op.transactions),
      json(op.tags),
      op.createdAt,
      op.updatedAt,
    ],
  );
}

/**
 * Writes back what a step changes on an operation: its status and history, its transactions. By primary key: the
 * caller has already read the row (locked, in its scope or by its workflow's id).
 */
export function addOperationState(batch: SqlBatch, op: Operation): void {
  const sql =
    'update operations set status = ?, states = ?::jsonb, transactions = ?::jsonb, updated_at = ? where id = ?';
  batch.add(sql, [op.status, JSON.stringify(op.states), JSON.stringify(op.transactions), op.updatedAt, op.id]);
}

// The filterable fields of GET /api/operations (../shared/spec/decisions.md, "Lists and filters").
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

/** GET /api/operations: the customer's operations (the tenant condition is the list repository's). */
export const OPERATION_LIST: ListResource<Operation> = {
  entity: OperationSchema,
  from: 'operations o',
  alias: 'o',
  catalogue: OPERATION_FIELDS,
};

/**
 * Withdrawals PROCESSING whose state has not changed since `before`, oldest first, across customers (operators,
 * `cambio operation list --stuck`): payouts the PSP has not settled, whose money may still leave. Through the ORM
 * on the system scope (`systemEm`); a rare operator read, not a hot path.
 */
export async function stuckPayouts(em: Em, before: Date, limit = 1000): Promise<Operation[]> {
  return em.find(
    OperationSchema,
    { type: 'WITHDRAWAL', status: 'PROCESSING', updatedAt: { $lt: before } },
    { orderBy: { updatedAt: 'asc' }, limit },
  );
}

/**
 * Withdrawals ON_HOLD (above the review threshold) since before `before`, oldest first: what `cambio operation list
 * --held` shows operators to approve or reject. Across customers: operators see every tenant.
 */
export async function heldWithdrawals(em: Em, before: Date, limit = 1000): Promise<Operation[]> {
  return em.find(
    OperationSchema,
    { type: 'WITHDRAWAL', status: 'ON_HOLD', updatedAt: { $lte: before } },
    { orderBy: { updatedAt: 'asc', id: 'asc' }, limit },
  );
}
