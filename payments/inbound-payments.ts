// Settling an inbound payment: asking the deposit's workflow to decide a recorded payment (a Temporal Update), for
// the API (a reported payment, step 2) and for the worker's sweep alike. Here rather than in api/services so that the
// worker reaches it without importing the API; it calls repositories and the Temporal client only.
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { systemEm, type Orm } from '../db/orm';
import type { InboundPayment } from '../db/entities';
import { leaveUnmatched, undecidedPayments } from '../db/repositories/inbound-payments';
import { operationWorkflowId } from '../workflows/ids';
import { inboundPaymentUpdate } from '../workflows/operation';
import { startPendingWorkflow } from '../workflows/start';

/** What settling a record needs: the workflow client, the outbox (a workflow not started yet), the database. */
export interface SettleContext {
  orm: Orm;
  temporal: Client;
  config: Pick<Config, 'taskQueue'>;
}

/**
 * Step 2 of a reported payment: the deposit's workflow decides the record (matched and reconciled, or unmatched)
 * and answers once that is committed. No database transaction is open meanwhile. A workflow that was never started
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
 * Settles the records nobody decided for `olderThanSeconds`, across customers: their reporter died between step 1
 * and step 2 (or the workflow could not be reached) and no retry came. The worker runs it periodically; returns how
 * many it saw.
 */
export async function sweepUndecidedPayments(s: SettleContext, olderThanSeconds: number): Promise<number> {
  const payments = await undecidedPayments(systemEm(s.orm), olderThanSeconds);
  for (const payment of payments) await settleInboundPayment(s, payment);
  return payments.length;
}
