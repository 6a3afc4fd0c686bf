// Inbound payments, the two steps every reporter (the sandbox route, the operator CLI, a rail's notice or its
// reconciliation) goes through: record what arrived (`recordInboundPayment`), then have it decided
// (`decideInboundPayment`). Here rather than in api/services so that the worker and the rails reach them without
// importing the API; they call repositories and the Temporal client only.
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { systemEm, tenantOrSystem, type Em, type Orm } from '../db/orm';
import { OperationSchema, type InboundPayment } from '../db/entities';
import { leaveUnmatched, recordPayment } from '../db/repositories/inbound-payments';
import { inTransaction } from '../db/transaction';
import { CambioError, notFound } from '../domain/errors';
import type { Dec } from '../domain/money';
import { operationWorkflowId } from '../workflows/ids';
import { inboundPaymentUpdate } from '../workflows/operation';
import { startPendingWorkflow } from '../workflows/start';

/** What deciding a record needs: the workflow client, the outbox (a workflow not started yet), the database. */
export interface SettleContext {
  orm: Orm;
  temporal: Client;
  config: Pick<Config, 'taskQueue'>;
}

/** What a rail (or an operator, or the sandbox) reports: money that arrived, under the rail's reference. */
export interface PaymentReport {
  /** The rail's reference: one payment per (rail, reference), across customers. */
  endToEndId: string;
  amount: Dec;
  asset: string;
  /** The deposit it was paid for (a PIX `txid` names one); its customer, account and rail come with it. */
  operationId?: string;
  /** Without a deposit: the customer it is for, or null when nobody can tell (the platform's suspense). */
  customerId?: string | null;
  /** Defaults to the deposit's rail; required without a deposit. */
  rail?: string;
}

/**
 * Step 1: the record, RECEIVED, and its arrival in its suspense, committed before anything decides it
 * (docs/decisions.md, "Inbound payments"). Its own short transaction on `em` (a savepoint when the caller holds
 * one); `em`'s scope is the reporter's: a customer's (the sandbox route: another customer's deposit is 404) or the
 * system's (a rail, the sweep). A reference already recorded gives that record, unless it is another customer's:
 * 409 RAIL_REFERENCE_IN_USE, which says nothing about that payment.
 */
export async function recordInboundPayment(em: Em, report: PaymentReport): Promise<InboundPayment> {
  let customerId = report.customerId ?? null;
  let accountId: string | null = null;
  let rail = report.rail;
  if (report.operationId) {
    const op = await em.fork({ keepTransactionContext: true }).findOne(OperationSchema, { id: report.operationId });
    if (!op) throw notFound('operation');
    if (op.type !== 'DEPOSIT') {
      const message = `operation is ${op.type}; inbound payments are for a DEPOSIT`;
      throw new CambioError('INVALID_STATE', message, { status: op.status, type: op.type });
    }
    customerId = op.customerId;
    accountId = op.accountId;
    rail ??= (op.intent.fundingInstruction as { rail: string }).rail;
  }
  if (!rail) throw new CambioError('VALIDATION_ERROR', 'a payment without a deposit names its rail');
  const scope = tenantOrSystem(em);
  if (scope !== null && scope !== customerId) throw notFound('operation');
  const { endToEndId, amount, asset } = report;
  const operationId = report.operationId ?? null;
  const { payment } = await inTransaction(em, (tx) =>
    recordPayment(tx, { customerId, operationId, accountId, amount, asset, rail: rail!, endToEndId }),
  );
  if (payment.customerId !== customerId) {
    const message = `a payment with ${rail} reference ${endToEndId} is already recorded for someone else`;
    throw new CambioError('RAIL_REFERENCE_IN_USE', message, { rail, endToEndId });
  }
  return payment;
}

// A decision is one short transaction in the deposit's workflow; one that takes longer than this waits on a
// workflow or worker in trouble, and the record stays RECEIVED for the sweep rather than holding its caller.
export const DECISION_DEADLINE_MS = 15_000;

export type DecisionOutcome = 'DECIDED' | 'RECEIVED';

/**
 * Step 2: the deposit's workflow decides the record (matched and reconciled, or unmatched) and answers once that is
 * committed, within `deadlineMs`. No database transaction is open meanwhile. A workflow that was never started (its
 * start still in the outbox) is started first; one that has closed can no longer match anything, so the record is
 * left UNMATCHED here (only if still RECEIVED), as is a record the workflow refuses for good (not its deposit's).
 * 'RECEIVED': the deadline passed first; the record waits for the sweep. A record with no deposit is UNMATCHED at
 * once: no deposit can take it, and its suspense holds it for an operator.
 */
export async function decideInboundPayment(
  s: SettleContext,
  payment: InboundPayment,
  deadlineMs = DECISION_DEADLINE_MS,
): Promise<DecisionOutcome> {
  if (payment.status !== 'RECEIVED') return 'DECIDED';
  if (!payment.operationId) {
    await leaveUnmatched(systemEm(s.orm), payment.id);
    return 'DECIDED';
  }
  const workflowId = operationWorkflowId(payment.operationId);
  const handle = s.temporal.workflow.getHandle(workflowId);
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 1; ; attempt++) {
    try {
      // The update id makes a retried request's update the same update, answered with the same outcome.
      const updateId = `inbound-payment-${payment.id}`;
      const args = [{ paymentId: payment.id }] as [{ paymentId: string }];
      await s.temporal.withDeadline(deadline, () => handle.executeUpdate(inboundPaymentUpdate, { args, updateId }));
      return 'DECIDED';
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        // Refused for good (the validator or a non-retryable step): no deposit will take it; the suspense keeps it.
        await leaveUnmatched(systemEm(s.orm), payment.id);
        return 'DECIDED';
      }
      if (Date.now() >= deadline) return 'RECEIVED';
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      if (attempt === 1) {
        // Started by the relay meanwhile, or by us now: ask once more either way.
        await startPendingWorkflow(s.orm, s.temporal, s.config.taskQueue, workflowId);
        continue;
      }
      await leaveUnmatched(systemEm(s.orm), payment.id);
      return 'DECIDED';
    }
  }
}
