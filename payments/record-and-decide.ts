// Inbound payments, the two steps every reporter (the sandbox route, the operator CLI, a rail's notice or its
// reconciliation) goes through: record what arrived (`recordInboundPayment`), then have it decided
// (`decideInboundPayment`). Here, beside the rest of inbound payments, rather than in services/, because the rails'
// activities and the worker's sweep reach them too; they call repositories and the Temporal client only.
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { systemEm, tenantOrSystem, type Em, type Orm } from '../db/orm';
import { OperationSchema, type InboundPayment, type InboundPaymentPayer } from '../db/entities';
import { findPayment, leaveUnmatched, recordPayment } from '../db/repositories/inbound-payments';
import { pendingStart } from '../db/repositories/outbox';
import { addDecision, decisionById, requeueDecision, type DecisionRow } from '../db/repositories/workflow-decisions';
import { inTransaction } from '../db/transaction';
import { railAccepts } from '../rails/registry';
import { CambioError, notFound } from '../domain/errors';
import type { Dec } from '../domain/money';
import { operationWorkflowId } from '../workflows/ids';
import { sendDecisionNow } from '../workflows/send-signal';
import { startRequestOf } from '../workflows/start';
import { setTimeout as sleep } from 'node:timers/promises';

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
  /** Who sent it, when the rail's record names the sending account (TED). */
  payer?: InboundPaymentPayer;
  /**
   * A person's word (an operator's `deposit pay`, the sandbox route), not a provider's: refused with
   * RAIL_ASSET_MISMATCH unless the rail carries the asset. USDC "paid" by TED is money no bank moved; recorded, it
   * would wait in suspense to be credited. A provider's report is recorded as it says: money that arrived is never
   * dropped.
   */
  claimed?: boolean;
}

/**
 * How a recorded payment reaches its deposit's workflow: as an INBOUND_PAYMENT decision row committed with the
 * record, and its signal (decision 0086). `actor` is who reported it (`operator:<name>`, `customer:<id>`,
 * `rail:<rail>`); `taskQueue` the operation workflows' queue.
 */
export interface PaymentDecisionRoute {
  taskQueue: string;
  actor: string;
}

/** The one decision of a payment: its id is the payment's, so the record, the sweep and a rerun name the same row. */
export function paymentDecisionId(paymentId: string): string {
  const hex = createHash('md5').update(`inbound-payment:${paymentId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The payment's decision row and signal row, in `tx`: `record` with the record itself; `requeue` for a payment
 * found RECEIVED later (recorded before payments were decisions, or whose signal found no workflow then), which
 * queues its signal again. The deposit's start, if still in the outbox, rides along (signalWithStart).
 */
async function addPaymentDecision(
  tx: Em,
  payment: InboundPayment,
  via: PaymentDecisionRoute,
  how: 'record' | 'requeue',
) {
  const workflowId = operationWorkflowId(payment.operationId!);
  const start = await pendingStart(tx, workflowId);
  const row: DecisionRow = {
    id: paymentDecisionId(payment.id),
    workflowId,
    kind: 'INBOUND_PAYMENT',
    customerId: payment.customerId!,
    target: payment.id,
    decision: null,
    reason: null,
    actor: via.actor,
  };
  const signal = { taskQueue: start?.task_queue ?? via.taskQueue, start: start ? startRequestOf(start) : undefined };
  await (how === 'record' ? addDecision(tx, row, signal) : requeueDecision(tx, row, signal));
}

/**
 * Step 1: the record, RECEIVED, and its arrival in its suspense, committed before anything decides it
 * (decision 0076). Its own short transaction on `em` (a savepoint when the caller holds
 * one); `em`'s scope is the reporter's: a customer's (the sandbox route: another customer's deposit is 404) or the
 * system's (a rail, the sweep). A reference already recorded gives that record, unless it is another customer's:
 * 409 RAIL_REFERENCE_IN_USE, which says nothing about that payment.
 */
export async function recordInboundPayment(
  em: Em,
  report: PaymentReport,
  via?: PaymentDecisionRoute,
): Promise<InboundPayment> {
  return (await recordInboundPaymentOnce(em, report, via)).payment;
}

/**
 * `recordInboundPayment`, telling whether this call recorded it (`created`) or found it recorded already. The check
 * of another customer's reference runs inside the transaction, so a refused report commits nothing (and an
 * operator's audited command records its refusal, not an OK).
 */
export async function recordInboundPaymentOnce(
  em: Em,
  report: PaymentReport,
  via?: PaymentDecisionRoute,
): Promise<{ payment: InboundPayment; created: boolean }> {
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
  // After the scope check: another customer's deposit is 404 whatever the asset, never a hint of its rail.
  if (report.claimed && !railAccepts(rail, report.asset)) {
    const message = `${rail} does not pay in ${report.asset}`;
    throw new CambioError('RAIL_ASSET_MISMATCH', message, { rail, asset: report.asset });
  }
  const { endToEndId, amount, asset } = report;
  const operationId = report.operationId ?? null;
  return inTransaction(em, async (tx) => {
    const recorded = await recordPayment(tx, {
      customerId,
      operationId,
      accountId,
      amount,
      asset,
      rail: rail!,
      endToEndId,
      payer: report.payer ?? null,
    });
    if (recorded.payment.customerId !== customerId) {
      const message = `a payment with ${rail} reference ${endToEndId} is already recorded for someone else`;
      throw new CambioError('RAIL_REFERENCE_IN_USE', message, { rail, endToEndId });
    }
    // The decision it waits for, with its signal's outbox row, in the record's COMMIT: a reporter that dies next
    // leaves it to the worker's relay. A payment for no deposit waits for no workflow: it is left UNMATCHED.
    if (recorded.created && via && operationId) await addPaymentDecision(tx, recorded.payment, via, 'record');
    return recorded;
  });
}

// A decision is one short transaction in the deposit's workflow; one that takes longer than this waits on a
// workflow or worker in trouble, and the record stays RECEIVED for the sweep rather than holding its caller.
export const DECISION_DEADLINE_MS = 15_000;

export type DecisionOutcome = 'DECIDED' | 'RECEIVED';

/**
 * Step 2: the deposit's workflow decides the record (matched and reconciled, or unmatched); the answer comes once
 * that is committed, or when `deadlineMs` has passed. No database transaction is open meanwhile. The record's
 * decision row names it to the workflow: the signal the record's COMMIT queued is sent now (unless the relay sent it
 * first); a record without one gets its signal queued again, and so, with `resendSent` (the sweep's), does one whose
 * signal went long ago. A workflow not started yet is started with it (signalWithStart); one that has closed can no
 * longer match anything, so the record is left UNMATCHED. 'RECEIVED': the deadline passed first; the record waits
 * for the sweep. A record with no deposit is UNMATCHED at once: no deposit can take it, and its suspense holds it
 * for an operator.
 */
export async function decideInboundPayment(
  s: SettleContext,
  payment: InboundPayment,
  deadlineMs = DECISION_DEADLINE_MS,
  actor = 'system:sweep',
  opts: SendOptions = {},
): Promise<DecisionOutcome> {
  const deadline = Date.now() + deadlineMs;
  if ((await sendPaymentDecision(s, payment, deadline, actor, opts)) === 'DECIDED') return 'DECIDED';
  // Decided now or by another caller (a PSP's notice, the relay). MATCHED came one step before the deposit's
  // reconciliation, which records what the payment counted for, in deposits started before decision 0157 (one step
  // since): the answer waits for that too.
  for (;;) {
    if (await decidedAndApplied(s, payment.id)) return 'DECIDED';
    if (Date.now() >= deadline) return 'RECEIVED';
    await sleep(50);
  }
}

export interface SendOptions {
  /**
   * The sweep's: a record still RECEIVED whose signal went has it queued and sent again. It finds records a minute
   * old, whose signal a workflow may have lost (one reset past it, say). Without it a signal that went is in flight:
   * the workflow's task is deciding it now, and a second signal would only fail that task's completion (a new event
   * arrived under it), and run its steps again.
   */
  resendSent?: boolean;
}

/**
 * Step 2 without its wait: a RECEIVED record's decision on its way to its deposit's workflow by `deadline` (the
 * `decision` signal, its row queued again when it had none, the deposit started with it). 'DECIDED': nothing is left
 * to decide (a record with no deposit is UNMATCHED now; one whose deposit has closed was left UNMATCHED by the send).
 * 'SENT': the workflow decides it (or already has, or the relay sends the signal if this send failed).
 */
export async function sendPaymentDecision(
  s: SettleContext,
  payment: InboundPayment,
  deadline: number,
  actor: string,
  opts: SendOptions = {},
): Promise<'DECIDED' | 'SENT'> {
  if (payment.status !== 'RECEIVED') return 'SENT';
  if (!payment.operationId) {
    await leaveUnmatched(systemEm(s.orm), payment.id);
    return 'DECIDED';
  }
  const decisionId = paymentDecisionId(payment.id);
  const send = () => s.temporal.withDeadline(deadline, () => sendDecisionNow(s.orm, s.temporal, decisionId));
  let sent = await send();
  // No signal row left: the relay or another writer sent it, or the record never had a decision (recorded before
  // payments were decisions, or without a route to its workflow).
  if (
    sent === 'none' &&
    (await stillReceived(s, payment.id)) &&
    (opts.resendSent || !(await decisionById(systemEm(s.orm), decisionId)))
  ) {
    const via = { taskQueue: s.config.taskQueue, actor };
    await inTransaction(systemEm(s.orm), (tx) => addPaymentDecision(tx, payment, via, 'requeue'));
    sent = await send();
  }
  // A closed workflow: the send has left it UNMATCHED.
  return sent === 'closed' ? 'DECIDED' : 'SENT';
}

async function stillReceived(s: SettleContext, paymentId: string): Promise<boolean> {
  return (await findPayment(systemEm(s.orm), paymentId))?.status === 'RECEIVED';
}

/** Decided, and what the decision caused is committed too: a MATCHED payment's deposit no longer REQUESTED. */
async function decidedAndApplied(s: SettleContext, paymentId: string): Promise<boolean> {
  const em = systemEm(s.orm);
  const payment = await findPayment(em, paymentId);
  if (!payment || payment.status === 'RECEIVED') return false;
  if (payment.status !== 'MATCHED' || !payment.operationId) return true;
  const op = await em.fork().findOne(OperationSchema, { id: payment.operationId });
  return op?.status !== 'REQUESTED';
}
