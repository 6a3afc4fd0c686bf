// Inbound payments (table `inbound_payments`): plain SQL through the caller's EntityManager and transaction
// (`em.execute`, or a statement of the caller's SqlBatch). Plain rather than ORM because a record is written once
// whatever the retries (`on conflict do nothing`) and is then changed only by batched statements beside the
// deposit's own (addDecision, addRemainder): reads return plain objects, never managed entities that a flush would
// write again. Tenant: a record carries the customer its caller found (the deposit's, or none), and the rail
// reference is looked up across customers because it is unique across them (the caller decides what a reporter of
// another customer sees); `findPayment` reads in the EntityManager's scope (`tenantOrSystem`); the steps of a
// deposit's workflow and the operator's actions address a row by id after they found it in their own scope, and the
// functions for workers and operators (`receivedPayments`, `listPaymentsForOperators`) act across customers.
import { randomUUID } from 'node:crypto';
import { tenantOrSystem, type Em } from '../orm';
import { SqlBatch } from '../batch';
import { entityFromRow, selectColumns } from '../rows';
import {
  INBOUND_PAYMENT_STATUSES,
  InboundPayment,
  InboundPaymentSchema,
  InboundPaymentStatus,
  type InboundPaymentPayer,
} from '../entities';
import type { FieldCatalogue } from '../../domain/list-filters';
import type { ListResource } from './lists';
import { addPosting } from './ledger';
import { receivePostings } from '../../domain/postings';
import type { Dec } from '../../domain/money';

const columns = (em: Em, alias = 'p') => selectColumns(em, InboundPaymentSchema, alias);
const toEntity = (em: Em, row: Record<string, unknown>) => entityFromRow(em, InboundPaymentSchema, row);

/**
 * GET /api/inbound-payments (its filterable fields: ../shared/spec/decisions.md, "Inbound payments"); the page is
 * db/repositories/lists.ts.
 */
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
  /** The customer it is for; null: nobody could attribute it (the platform's suspense). */
  customerId: string | null;
  /** The deposit it arrived for, and that deposit's account; null when none. */
  operationId: string | null;
  accountId: string | null;
  amount: Dec;
  asset: string;
  rail: string;
  endToEndId: string;
  /** Who sent it, when the rail's record says (TED). */
  payer?: InboundPaymentPayer | null;
}

/**
 * Records a payment the rail reported, RECEIVED (not decided yet), and its arrival in its suspense, in the caller's
 * transaction. The rail reference is the key, across customers: a second report of the same (`rail`,
 * `endToEndId`) inserts nothing and gets the first record (`created` false), whatever it says and whoever it names,
 * so money reported twice is counted once. The caller decides what a reporter of another customer may see.
 */
export async function recordPayment(em: Em, p: NewPayment): Promise<{ payment: InboundPayment; created: boolean }> {
  const id = randomUUID();
  const [inserted] = await em.execute(
    `insert into inbound_payments (id, operation_id, customer_id, account_id, amount, asset, rail, end_to_end_id,
       payer, status, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, 'RECEIVED', now(), now())
     on conflict (rail, end_to_end_id) where remainder_of is null do nothing
     returning ${columns(em, 'inbound_payments')}`,
    [
      id,
      p.operationId,
      p.customerId,
      p.accountId,
      p.amount.toFixed(),
      p.asset,
      p.rail,
      p.endToEndId,
      p.payer ? JSON.stringify(p.payer) : null,
    ],
  );
  if (!inserted) {
    const [row] = await em.execute(
      `select ${columns(em)} from inbound_payments p
       where p.rail = ? and p.end_to_end_id = ? and p.remainder_of is null`,
      [p.rail, p.endToEndId],
    );
    return { payment: toEntity(em, row), created: false };
  }
  const batch = new SqlBatch();
  const key = `inbound:${id}:receive`;
  const description = 'inbound payment received';
  addPosting(batch, { key, operationId: null, customerId: p.customerId, description, postings: receivePostings(p) });
  await batch.run(em);
  return { payment: toEntity(em, inserted), created: true };
}

/**
 * One record by id within the EntityManager's customer scope (or any, in the system scope); null if none.
 * `withPlatform`: the platform's records (no customer) too, for an operator resolving one for a customer.
 */
export async function findPayment(
  em: Em,
  id: string,
  opts: { lock?: boolean; withPlatform?: boolean } = {},
): Promise<InboundPayment | null> {
  const customerId = tenantOrSystem(em);
  const platform = opts.withPlatform ? ' or p.customer_id is null' : '';
  const tenant = customerId === null ? '' : ` and (p.customer_id = ?${platform})`;
  const params = customerId === null ? [id] : [id, customerId];
  const sql = `select ${columns(em)} from inbound_payments p where p.id = ?${tenant}${opts.lock ? ' for update' : ''}`;
  const [row] = await em.execute(sql, params);
  return row ? toEntity(em, row) : null;
}

/** The record of a rail reference, across customers (it is unique across them); null if none yet. */
export async function findPaymentByReference(em: Em, rail: string, endToEndId: string): Promise<InboundPayment | null> {
  const [row] = await em.execute(
    `select ${columns(em)} from inbound_payments p
     where p.rail = ? and p.end_to_end_id = ? and p.remainder_of is null`,
    [rail, endToEndId],
  );
  return row ? toEntity(em, row) : null;
}

/** Every record paid for a deposit, oldest first, locked: the caller holds the deposit's row lock already. */
export async function paymentsOfDeposit(em: Em, operationId: string): Promise<InboundPayment[]> {
  const sql = `select ${columns(em)} from inbound_payments p where p.operation_id = ?
               order by p.created_at, p.id for update`;
  const rows = await em.execute(sql, [operationId]);
  return rows.map((r: Record<string, unknown>) => toEntity(em, r));
}

/** The resolution of a record: only these fields change; its facts never do (a trigger refuses it). */
export interface Decision {
  status: InboundPaymentStatus;
  /** What its deposit used, when less than received; null clears it (no longer counted toward the deposit). */
  matchedAmount?: Dec | null;
  creditOperationId?: string;
  creditAccountId?: string;
  returnEndToEndId?: string;
  returnReason?: string;
  /** Null clears it (a new return attempt). */
  returnFailure?: string | null;
  /** Our id for a return sent through a provider; null clears it (a return done at the bank). */
  returnId?: string | null;
}

/** A decision on a record, as a statement of the caller's batch. */
export function addDecision(batch: SqlBatch, id: string, change: Decision): void {
  batch.add(
    `update inbound_payments set status = ?, updated_at = now(),
       matched_amount = case when ? then ?::numeric else matched_amount end,
       credit_operation_id = coalesce(?::uuid, credit_operation_id),
       credit_account_id = coalesce(?::uuid, credit_account_id),
       return_end_to_end_id = coalesce(?, return_end_to_end_id), return_reason = coalesce(?, return_reason),
       return_failure = case when ? then ? else return_failure end,
       return_id = case when ? then ? else return_id end
     where id = ?`,
    [
      change.status,
      change.matchedAmount !== undefined,
      change.matchedAmount?.toFixed() ?? null,
      change.creditOperationId ?? null,
      change.creditAccountId ?? null,
      change.returnEndToEndId ?? null,
      change.returnReason ?? null,
      change.returnFailure !== undefined,
      change.returnFailure ?? null,
      change.returnId !== undefined,
      change.returnId ?? null,
      id,
    ],
  );
}

/** The excess of an overpayment, split off its matched record as an UNMATCHED record of its own. */
export function addRemainder(batch: SqlBatch, parent: InboundPayment, amount: Dec): string {
  const id = randomUUID();
  batch.add(
    `insert into inbound_payments (id, operation_id, customer_id, account_id, amount, asset, rail, end_to_end_id,
       payer, status, remainder_of, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, 'UNMATCHED', ?, now(), now())`,
    [
      id,
      parent.operationId,
      parent.customerId,
      parent.accountId,
      amount.toFixed(),
      parent.asset,
      parent.rail,
      parent.endToEndId,
      parent.payer ? JSON.stringify(parent.payer) : null,
      parent.id,
    ],
  );
  return id;
}

/** Where a pass over the RECEIVED records stands: the last one it took (keyset on created_at, id). */
export interface ReceivedCursor {
  createdAt: Date;
  id: string;
}

/**
 * Up to `limit` records RECEIVED for `olderThanSeconds` (their reporter died before the deposit's workflow
 * answered), oldest first, after `after`.
 */
export async function receivedPayments(
  em: Em,
  olderThanSeconds: number,
  limit: number,
  after?: ReceivedCursor,
): Promise<InboundPayment[]> {
  const keyset = after ? ' and (p.created_at, p.id) > (?, ?)' : '';
  const rows = await em.execute(
    `select ${columns(em)} from inbound_payments p
     where p.status = 'RECEIVED' and p.created_at < now() - make_interval(secs => ?)${keyset}
     order by p.created_at, p.id limit ?`,
    [olderThanSeconds, ...(after ? [after.createdAt, after.id] : []), limit],
  );
  return rows.map((r: Record<string, unknown>) => toEntity(em, r));
}

/**
 * Marks a record UNMATCHED if it is still RECEIVED (its deposit's workflow has closed, so nothing else can decide
 * it). True when this call decided it.
 */
export async function leaveUnmatched(em: Em, id: string): Promise<boolean> {
  const rows = await em.execute(
    `update inbound_payments set status = 'UNMATCHED', updated_at = now()
     where id = ? and status = 'RECEIVED' returning id`,
    [id],
  );
  return rows.length > 0;
}

/**
 * The payments of INBOUND_PAYMENT decisions whose signal found its deposit's workflow closed: UNMATCHED if still
 * RECEIVED (no deposit will take them; their suspense holds them). Across customers, as the relay acts.
 */
export async function leaveUnmatchedByDecisions(em: Em, decisionIds: string[]): Promise<number> {
  if (!decisionIds.length) return 0;
  const rows = await em.execute(
    `update inbound_payments set status = 'UNMATCHED', updated_at = now()
     where status = 'RECEIVED'
       and id in (select target from workflow_decisions where id in (?) and kind = 'INBOUND_PAYMENT')
     returning id`,
    [decisionIds],
  );
  return rows.length;
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

/**
 * Whether the payment under (`rail`, `endToEndId`) went back as `returnEndToEndId` by an operator's word (`cambio
 * payment return --outside --reference`): a return its provider made without us, settled by hand (decision 0356).
 */
export async function returnedOutsideAs(
  em: Em,
  rail: string,
  endToEndId: string,
  returnEndToEndId: string,
): Promise<boolean> {
  const rows = await em.execute(
    `select 1 from inbound_payments p
     where p.rail = ? and p.end_to_end_id = ? and p.status = 'RETURNED' and p.return_end_to_end_id = ?`,
    [rail, endToEndId, returnEndToEndId],
  );
  return rows.length > 0;
}

/** The record a return id of ours belongs to (any customer), or null. */
export async function paymentOfReturn(em: Em, returnId: string): Promise<InboundPayment | null> {
  const [row] = await em.execute(`select ${columns(em)} from inbound_payments p where p.return_id = ?`, [returnId]);
  return row ? toEntity(em, row) : null;
}
