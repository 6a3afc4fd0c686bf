import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { Em, systemEm, tenantOf } from '../../db/orm';
import { InboundPayment, InboundPaymentSchema, INBOUND_PAYMENT_STATUSES, OperationSchema } from '../../db/entities';
import { findPayment, leaveUnmatched, recordPayment, undecidedPayments } from '../../db/repositories/inbound-payments';
import { inTransaction } from '../../db/transaction';
import type { AssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { parseAmountValue } from '../../domain/money';
import { operationWorkflowId } from '../../workflows/ids';
import { inboundPaymentUpdate } from '../../workflows/operation';
import { notFound } from '../errors';
import type { FieldCatalogue } from '../lists/filter-fields';
import { ListQuery, runList } from '../lists/run-list';
import { presentInboundPayment } from '../presenters/inbound-payment';
import type { ServiceContext } from './context';
import { startPendingWorkflow } from '../../workflows/start';

/** What settling a record needs: the workflow client, the outbox (a workflow not started yet), the database. */
type SettleContext = Pick<ServiceContext, 'orm' | 'temporal' | 'config'>;

export interface InboundPaymentReport {
  amount: { value: string; asset: AssetCode };
  endToEndId?: string;
}

/**
 * Step 1 of a reported payment: the record, committed before anything decides it (docs/decisions.md, "Inbound
 * payments"). Its own short transaction (a savepoint when the caller holds one). Keyed by the rail reference: a
 * report of an `endToEndId` already recorded returns that record. Without one, `defaultEndToEndId` names it (the
 * API derives it from the idempotency key, so a retried request finds its first attempt's record).
 */
export async function recordInboundPayment(
  em: Em,
  operationId: string,
  body: InboundPaymentReport,
  opts: { defaultEndToEndId?: string } = {},
): Promise<InboundPayment> {
  const customerId = tenantOf(em);
  const op = await em.fork({ keepTransactionContext: true }).findOne(OperationSchema, { id: operationId });
  if (!op) throw notFound('operation');
  if (op.type !== 'DEPOSIT') {
    const message = `operation is ${op.type}; inbound payments are for a DEPOSIT`;
    throw new CambioError('INVALID_STATE', message, { status: op.status, type: op.type });
  }
  const value = parseAmountValue(body.amount.value, body.amount.asset, { path: '/amount/value' });
  const endToEndId = body.endToEndId ?? opts.defaultEndToEndId ?? newEndToEndId();
  const rail = (op.intent.fundingInstruction as { rail: string }).rail;
  const asset = body.amount.asset;
  const { payment } = await inTransaction(em, (tx) =>
    recordPayment(tx, { customerId, operationId, accountId: op.accountId, amount: value, asset, rail, endToEndId }),
  );
  return payment;
}

/**
 * Step 2: the deposit's workflow decides the record (a Temporal Update: matched and reconciled, or unmatched) and
 * answers once that is committed. No database transaction is open meanwhile. A workflow that was never started
 * (its start still in the outbox) is started first; one that has closed can no longer match anything, so the
 * record is left UNMATCHED here (a conditional update: only if still undecided).
 */
export async function settleInboundPayment(s: SettleContext, payment: InboundPayment): Promise<void> {
  if (payment.decided || !payment.operationId) return;
  const workflowId = operationWorkflowId(payment.operationId);
  const handle = s.temporal.workflow.getHandle(workflowId);
  for (let attempt = 1; ; attempt++) {
    try {
      // The update id makes a retried request's update the same update, answered with the same outcome.
      const updateId = `inbound-payment-${payment.id}`;
      await handle.executeUpdate(inboundPaymentUpdate, { args: [{ paymentId: payment.id }], updateId });
      return;
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      if (attempt === 1) {
        // Started by the relay meanwhile, or by us now: ask once more either way.
        await startPendingWorkflow(s.orm, s.temporal, s.config.taskQueue, workflowId);
        continue;
      }
      await leaveUnmatched(systemEm(s.orm), payment.id);
      return;
    }
  }
}

/**
 * Settles the records nobody decided for `olderThanSeconds`: their reporter died between step 1 and step 2 (or
 * the workflow could not be reached) and no retry came. The worker runs it periodically; returns how many it saw.
 */
export async function sweepUndecidedPayments(s: SettleContext, olderThanSeconds: number): Promise<number> {
  const payments = await undecidedPayments(systemEm(s.orm), olderThanSeconds);
  for (const payment of payments) await settleInboundPayment(s, payment);
  return payments.length;
}

/** Both steps, then the record as decided: the operator CLI's `deposit pay`. */
export async function reportInboundPayment(s: ServiceContext, em: Em, operationId: string, body: InboundPaymentReport) {
  const payment = await recordInboundPayment(em, operationId, body);
  await settleInboundPayment(s, payment);
  return getInboundPayment(em, payment.id);
}

/** One record of the EntityManager's customer; another customer's is 404. */
export async function getInboundPayment(em: Em, id: string) {
  const payment = await findPayment(em.fork({ keepTransactionContext: true }), id);
  if (!payment) throw notFound('inbound payment');
  return presentInboundPayment(payment);
}

// docs/decisions.md: the filterable fields of GET /api/inbound-payments.
const FIELDS: FieldCatalogue = {
  status: { type: 'enum', values: INBOUND_PAYMENT_STATUSES, sql: 'p.status' },
  operationId: { type: 'uuid', sql: 'p.operation_id' },
  createdAt: { type: 'timestamp', sql: 'p.created_at' },
};

export async function listInboundPayments(em: Em, query: ListQuery, cursorSecret: string) {
  const resource = { entity: InboundPaymentSchema, from: 'inbound_payments p', alias: 'p', catalogue: FIELDS };
  const page = await runList(em, resource, query, cursorSecret);
  return { data: page.data.map(presentInboundPayment), meta: page.meta };
}

/** A PIX-style end-to-end id for a report that named none: E + 31 random characters. */
export const newEndToEndId = (): string => `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;
