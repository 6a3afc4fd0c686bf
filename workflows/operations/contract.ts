// What the outside world sees of an operation's workflow (workflows/operation.ts): its input, the signals, update and
// query it takes. The messages' names are recorded in histories and sent by clients: they never change.
import * as wf from '@temporalio/workflow';

export interface OperationWorkflowInput {
  operationId: string;
  type: 'DEPOSIT' | 'WITHDRAWAL' | 'SWAP' | 'TRANSFER';
  /** Deposit: how long to wait for a payment, and how long a failed reconciliation stays replayable. */
  depositWindowSeconds?: number;
  replayWindowSeconds?: number;
  /**
   * Deposit: when its window ends, counted from its creation (the instant its instruction names), not from its
   * workflow's start, which an outage may delay (decision 0339). Deposits created before have none.
   */
  depositWindowEndsAt?: string;
  /** Deposit: how long after its window it still takes a payment its provider took in time (decision 0191). */
  lateArrivalSeconds?: number;
  /** Withdrawal: above the review threshold, an operator decides before the payout. */
  requiresReview?: boolean;
  /**
   * A withdrawal continued as new while its payout was pending at the PSP (decision 0109): the payout was sent,
   * the operation is PROCESSING; the new run reads the payout again after `waitMs`.
   */
  pendingPayout?: PendingPayout;
}

export interface PendingPayout {
  waitMs: number;
}

export interface HoldDecision {
  decision: 'APPROVE' | 'REJECT';
  reason?: string;
}

export const inboundPaymentSignal = wf.defineSignal<[{ paymentId: string }]>('inboundPayment');
/**
 * A payment recorded for this deposit, to be decided by the workflow: counted toward the deposit while it is open
 * (and reconciled at once while it waits), or UNMATCHED once it is closed. Deposits started before payments were
 * decisions obey it (their histories must replay); since, a payment reaches its deposit as an INBOUND_PAYMENT
 * decision row named by the `decision` signal, and this update is ignored and listed (`ignoredSignals`).
 */
export const inboundPaymentUpdate = wf.defineUpdate<string, [{ paymentId: string }]>('inboundPaymentUpdate');
/** Obeyed only by operations started before decisions were rows (their histories must replay); ignored since. */
export const replaySignal = wf.defineSignal('replay');
/** Obeyed only by operations started before decisions were rows (their histories must replay); ignored since. */
export const holdDecisionSignal = wf.defineSignal<[HoldDecision]>('holdDecision');
export const statusQuery = wf.defineQuery<string>('status');
