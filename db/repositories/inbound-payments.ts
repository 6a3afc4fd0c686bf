// Inbound payments (table `inbound_payments`): plain SQL through the caller's EntityManager and transaction
// (`em.execute`, or a statement of the caller's SqlBatch). Plain rather than ORM because a record is written once
// whatever the retries (`on conflict do nothing`) and is then changed only by batched statements beside the
// deposit's own (addDecision, addRemainder): reads return plain objects, never managed entities that a flush would
// write again. The tenant is the EntityManager's: a record is written and read in its customer scope (`tenantOf`),
// and the system scope reads any (`tenantOrSystem`); the steps of a deposit's workflow and the operator's actions
// address a row by id after they found it in their own scope, and the functions for workers and operators
// (`undecidedPayments`, `listPaymentsForOperators`) act across customers.
import { randomUUID } from 'node:crypto';
import { tenantOf, tenantOrSystem, type Em } from '../orm';
import { SqlBatch } from '../batch';
import { entityFromRow, selectColumns } from '../rows';
import { INBOUND_PAYMENT_STATUSES, InboundPayment, InboundPaymentSchema, InboundPaymentStatus } from '../entities';
import type { FieldCatalogue } from '../../domain/list-filters';
import type { ListResource } from './lists';
import { addPosting } from './ledger';
import { receivePostings } from '../../domain/postings';
import type { Dec } from '../../domain/money';

const columns = (em: Em, alias = 'p') => selectColumns(em, InboundPaymentSchema, alias);
const toEntity = (em: Em, row: Record<string, unknown>) => entityFromRow(em, InboundPaymentSchema, row);

/** GET /api/inbound-payments (docs/decisions.md: its filterable fields); the page is db/repositories/lists.ts. */
export const INBOUND_PAYMENT_LIST: ListResource<InboundPayment> = {
  entity: InboundPaymentSchema,
  from: 'inbound_payments p',
  alias: 'p',
  catalogue: {
    status: { type: 'enum', values: INBOUND_PAYMENT_STATUSES, sql: 'p.status' },
    operationId: { type: 'uuid', sql: 'p.operation_id' },
    createdAt: { type: 'timestamp', sql: 'p.created_at' },
  } satisfies FieldCatalogue,
};

export interface NewPayment {
  operationId: string;
  accountId: string;
  amount: Dec;
  asset: string;
  rail: string;
  endToEndId: string;
}

/**
 * Records a payment the rail reported, undecided, and its arrival in the customer's suspense, in the caller's
 * transaction. The rail reference is the key: a second report of the same `endToEndId` inserts nothing and gets
 * the first record (`created` false), whatever it says, so money reported twice is counted once. The record is the
 * EntityManager's customer's.
 */
export async function recordPayment(em: Em, p: NewPayment): Promise<{ payment: InboundPayment; created: boolean }> {
  const id = randomUUID();
  const customerId = tenantOf(em);
  const [inserted] = await em.execute(
    `insert into inbound_payments (id, operation_id, customer_id, account_id, amount, asset, rail, end_to_end_id,
       status, decided, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 'UNMATCHED', false, now(), now())
     on conflict (customer_id, end_to_end_id) where remainder_of is null do nothing
     returning *`,
    [id, p.operationId, customerId, p.accountId, p.amount.toFixed(), p.asset, p.rail, p.endToEndId],
  );
  if (!inserted) {
    const [row] = await em.execute(
      `select ${columns(em)} from inbound_payments p
       where p.customer_id = ? and p.end_to_end_id = ? and p.remainder_of is null`,
      [customerId, p.endToEndId],
    );
    return { payment: toEntity(em, row), created: false };
  }
  const batch = new SqlBatch();
  const key = `inbound:${id}:receive`;
  const description = 'inbound payment received';
  const postings = receivePostings({ ...p, customerId });
  addPosting(batch, { key, operationId: null, customerId, description, postings });
  await batch.run(em);
  return { payment: toEntity(em, inserted), created: true };
}

/** One record by id within the EntityManager's customer scope (or any, in the system scope); null if none. */
export async function findPayment(em: Em, id: string, opts: { lock?: boolean } = {}): Promise<InboundPayment | null> {
  const customerId = tenantOrSystem(em);
  const tenant = customerId === null ? '' : ' and p.customer_id = ?';
  const params = customerId === null ? [id] : [id, customerId];
  const sql = `select ${columns(em)} from inbound_payments p where p.id = ?${tenant}${opts.lock ? ' for update' : ''}`;
  const [row] = await em.execute(sql, params);
  return row ? toEntity(em, row) : null;
}

/** Every record paid for a deposit, oldest first, locked: the caller holds the deposit's row lock already. */
export async function paymentsOfDeposit(em: Em, operationId: string): Promise<InboundPayment[]> {
  const sql = `select ${columns(em)} from inbound_payments p where p.operation_id = ?
               order by p.created_at, p.id for update`;
  const rows = await em.execute(sql, [operationId]);
  return rows.map((r: Record<string, unknown>) => toEntity(em, r));
}

export interface Decision {
  status: InboundPaymentStatus;
  amount?: Dec;
  operationId?: string | null;
  accountId?: string | null;
  returnEndToEndId?: string;
  returnReason?: string;
}

/** A decision on a record, as a statement of the caller's batch. */
export function addDecision(batch: SqlBatch, id: string, change: Decision): void {
  batch.add(
    `update inbound_payments set status = ?, decided = true, updated_at = now(),
       amount = coalesce(?::numeric, amount),
       operation_id = case when ? then ?::uuid else operation_id end,
       account_id = case when ? then ?::uuid else account_id end,
       return_end_to_end_id = coalesce(?, return_end_to_end_id), return_reason = coalesce(?, return_reason)
     where id = ?`,
    [
      change.status,
      change.amount?.toFixed() ?? null,
      change.operationId !== undefined,
      change.operationId ?? null,
      change.accountId !== undefined,
      change.accountId ?? null,
      change.returnEndToEndId ?? null,
      change.returnReason ?? null,
      id,
    ],
  );
}

/** The excess of an overpayment, split off its matched record as an UNMATCHED record of its own. */
export function addRemainder(batch: SqlBatch, parent: InboundPayment, amount: Dec): string {
  const id = randomUUID();
  batch.add(
    `insert into inbound_payments (id, operation_id, customer_id, account_id, amount, asset, rail, end_to_end_id,
       status, decided, remainder_of, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 'UNMATCHED', true, ?, now(), now())`,
    [
      id,
      parent.operationId,
      parent.customerId,
      parent.accountId,
      amount.toFixed(),
      parent.asset,
      parent.rail,
      parent.endToEndId,
      parent.id,
    ],
  );
  return id;
}

/** Records nobody decided for `olderThanSeconds` (the reporter died before the deposit's workflow answered). */
export async function undecidedPayments(em: Em, olderThanSeconds: number, limit = 100): Promise<InboundPayment[]> {
  const rows = await em.execute(
    `select ${columns(em)} from inbound_payments p
     where not p.decided and p.created_at < now() - make_interval(secs => ?) order by p.created_at limit ?`,
    [olderThanSeconds, limit],
  );
  return rows.map((r: Record<string, unknown>) => toEntity(em, r));
}

/**
 * Marks a record UNMATCHED if it is still undecided (its deposit's workflow has closed, so nothing else can decide
 * it). True when this call decided it.
 */
export async function leaveUnmatched(em: Em, id: string): Promise<boolean> {
  const rows = await em.execute(
    `update inbound_payments set decided = true, status = 'UNMATCHED', updated_at = now()
     where id = ? and not decided returning id`,
    [id],
  );
  return rows.length > 0;
}

export interface OperatorFilter {
  customerId?: string;
  status?: string;
  limit?: number;
}

/** Operators: records across customers, newest first, optionally of one customer and one status. */
export async function listPaymentsForOperators(em: Em, filter: OperatorFilter): Promise<InboundPayment[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.customerId) {
    where.push('p.customer_id = ?');
    params.push(filter.customerId);
  }
  if (filter.status) {
    where.push('p.status = ?');
    params.push(filter.status);
  }
  const rows = await em.execute(
    `select ${columns(em)} from inbound_payments p ${where.length ? `where ${where.join(' and ')}` : ''}
     order by p.created_at desc, p.id desc limit ?`,
    [...params, filter.limit ?? 1000],
  );
  return rows.map((r: Record<string, unknown>) => toEntity(em, r));
}
