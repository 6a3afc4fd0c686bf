import * as wf from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { PayoutState } from '../rails/rail';
import {
  FIRST_STATUS_READ_MS,
  MAX_STATUS_READ_MS,
  railCalls,
  railNotConfigured,
  railRejection,
  statusReadPause,
  statusReadPauses,
  timeToContinueAsNew,
} from './rail-calls';
import { operationStatusKey } from './search-attributes';
import { ignoredSignals, onDecisions } from './decision';

export interface OperationWorkflowInput {
  operationId: string;
  type: 'DEPOSIT' | 'WITHDRAWAL' | 'SWAP' | 'TRANSFER';
  /** Deposit: how long to wait for a payment, and how long a failed reconciliation stays replayable. */
  depositWindowSeconds?: number;
  replayWindowSeconds?: number;
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

const acts = wf.proxyActivities<Activities>({
  // Each activity is one short database transaction; a worker that died holding one is noticed after this.
  startToCloseTimeout: '10s',
  // Infrastructure hiccups retry forever with a capped back-off; business failures are non-retryable.
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
});

// Swaps and transfers settle in one short transaction with no outside effect: run it as a local activity, inside
// the workflow task that starts the workflow, instead of a scheduled activity and a second workflow task. Same
// at-least-once execution (a worker lost mid-way makes the task time out and the step run again, which the row
// lock, the state check and the ledger key make harmless), same timeout and retries, the result recorded in
// history as a marker; only the dispatch through the server is saved.
const inWorkflowTask = wf.proxyLocalActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '200ms', maximumInterval: '10s', backoffCoefficient: 2 },
});

// Deposits started before inbound payments were decided by the workflow keep the signal-and-count path.
const DECIDES_PAYMENTS = 'deposit-decides-inbound-payments';
// Signal-path deposits still running when this code arrived close like the others when they end.
const SIGNAL_PATH_CLOSES = 'signal-path-deposit-closes';
// Operations started from here on take hold decisions and replays only as recorded rows (workflows/decision.ts).
const DECISIONS_ARE_ROWS = 'operation-decisions-are-rows';
// Deposits started from here on run their own database steps as local activities (decision 0098).
const DEPOSIT_STEPS_IN_TASK = 'deposit-database-steps-in-workflow-task';
// A signal-path deposit counts an `inboundPayment` signal only if it names a payment recorded for it.
const PAYMENT_SIGNALS_CHECKED = 'signal-path-payment-signals-checked';
// Deposits started from here on take their payments only as INBOUND_PAYMENT decision rows, not by the update.
const PAYMENTS_ARE_ROWS = 'deposit-payments-are-rows';

/** One workflow per operation (id `operation-${id}`): the operation's state machine. */
export async function operationWorkflow(input: OperationWorkflowInput): Promise<string> {
  const { operationId } = input;
  let status = 'REQUESTED';
  let payments = 0;
  let replays = 0;
  let decision: HoldDecision | undefined;
  // Deposit: `open` until it completes, expires or its replay window closes; one step at a time (`busy`) among
  // the payment updates and the workflow's own reconciliations, so each decision sees the state the last one left.
  let open = true;
  let busy = false;
  let legacy = false;
  const acquire = async () => {
    // Re-checked after each wake-up: two waiters woken in one activation must not both take it.
    while (busy) await wf.condition(() => !busy);
    busy = true;
  };
  wf.setHandler(statusQuery, () => status);
  const rowsOnly = wf.patched(DECISIONS_ARE_ROWS);
  // Decided before any handler runs: a payment signal delivered with the first task must see which path this is.
  const decidesPayments = input.type === 'DEPOSIT' && wf.patched(DECIDES_PAYMENTS);
  legacy = input.type === 'DEPOSIT' && !decidesPayments;
  const paymentsAreRows = input.type === 'DEPOSIT' && wf.patched(PAYMENTS_ARE_ROWS);
  // A deposit's own database steps (deciding a payment, reconciling, closing, expiring) inside the workflow task;
  // deposits started before scheduled them as activities, and replay so.
  const depositSteps = input.type === 'DEPOSIT' && wf.patched(DEPOSIT_STEPS_IN_TASK) ? inWorkflowTask : acts;
  const ignore = ignoredSignals();
  wf.setHandler(inboundPaymentSignal, async (signal) => {
    if (!legacy) return ignore('inboundPayment', 'payments reach a deposit through the inboundPaymentUpdate');
    if (!wf.patched(PAYMENT_SIGNALS_CHECKED)) return void payments++;
    const paymentId = typeof signal?.paymentId === 'string' ? signal.paymentId : '';
    if (await acts.paymentRecordedFor({ operationId, paymentId })) payments++;
    else ignore('inboundPayment', `no payment ${paymentId || '(none)'} is recorded for this deposit`);
  });
  wf.setHandler(replaySignal, () => {
    if (rowsOnly) return ignore('replay', 'a replay is a recorded row, named by the decision signal');
    replays++;
  });
  wf.setHandler(holdDecisionSignal, (d) => {
    if (rowsOnly) return ignore('holdDecision', 'a decision is a recorded row, named by the decision signal');
    decision ??= d;
  });

  const track = (next: string) => {
    status = next;
    wf.upsertSearchAttributes([{ key: operationStatusKey, value: next }]);
  };
  const fail = async (code: string, message: string, via = acts) =>
    track(await via.failOperation({ operationId, reason: { code, message, details: {} } }));

  /** Decides one payment recorded for this deposit, then reconciles a deposit still waiting for its money. */
  const decidePayment = async (paymentId: string): Promise<string> => {
    await acquire();
    try {
      const decided = await depositSteps.decideInboundPayment({ operationId, paymentId, open });
      if (legacy) payments++;
      // A deposit still waiting for its money reconciles at once; a FAILED one waits for an operator's replay.
      else if (open && status === 'REQUESTED') {
        track(await depositSteps.reconcileDeposit({ operationId }));
        if ((status as string) === 'COMPLETED') open = false;
      }
      return decided;
    } finally {
      busy = false;
    }
  };

  // Every deposit takes payment rows, those started before too (a history records what an activity answered, not
  // what it was asked, so asking for both kinds replays). Results recorded before have no kind: replays and holds.
  const kinds: Parameters<typeof onDecisions>[0] =
    input.type === 'DEPOSIT' ? ['DEPOSIT_REPLAY', 'INBOUND_PAYMENT'] : 'HOLD';
  onDecisions(kinds, ignore, async (d) => {
    if (d.kind === 'INBOUND_PAYMENT') {
      // The row names its payment; a payment that is not this deposit's fails for good, and changes nothing.
      await decidePayment(d.target ?? '').catch((err: unknown) => {
        // A scheduled step fails as an ActivityFailure (any, as before); a local step as the ApplicationFailure.
        if (!(err instanceof wf.ActivityFailure || err instanceof wf.ApplicationFailure)) throw err;
        ignore(
          'decision',
          `payment ${d.target} of decision ${d.decisionId} is not one of this deposit's`,
          d.decisionId,
        );
      });
      return;
    }
    if (input.type === 'DEPOSIT') replays++;
    else decision ??= { decision: d.decision ?? 'REJECT', ...(d.reason !== undefined ? { reason: d.reason } : {}) };
  });

  wf.setHandler(
    inboundPaymentUpdate,
    async ({ paymentId }) => {
      if (paymentsAreRows) {
        ignore('inboundPaymentUpdate', 'payments reach this deposit as recorded rows, named by the decision signal');
        return 'IGNORED';
      }
      return decidePayment(paymentId);
    },
    {
      validator: ({ paymentId }) => {
        if (input.type !== 'DEPOSIT') throw new Error('only a deposit takes inbound payments');
        if (typeof paymentId !== 'string' || !paymentId) throw new Error('paymentId is required');
      },
    },
  );

  /** The deposit's life once payments are decided here: wait, reconcile on replays, close. */
  async function deposit(): Promise<void> {
    // The payment updates reconcile while it waits; the window ends it unless one of them did.
    await wf.condition(() => status !== 'REQUESTED', seconds(input.depositWindowSeconds));
    await acquire();
    if (status === 'REQUESTED') {
      open = false;
      await fail('DEPOSIT_EXPIRED', 'no payment arrived within the deposit window', depositSteps);
      await depositSteps.closeDeposit({ operationId });
      busy = false;
      return wf.condition(wf.allHandlersFinished);
    }
    busy = false;
    let handled = 0;
    while (status !== 'COMPLETED') {
      // Every replay sent is followed by a reconciliation that starts after it; a spare one changes nothing.
      const replayed = await wf.condition(() => replays > handled, seconds(input.replayWindowSeconds));
      await acquire();
      if (!replayed) {
        open = false;
        await depositSteps.closeDeposit({ operationId });
        busy = false;
        return wf.condition(wf.allHandlersFinished);
      }
      handled = replays;
      track(await depositSteps.reconcileDeposit({ operationId }));
      busy = false;
    }
    await acquire();
    open = false;
    await depositSteps.closeDeposit({ operationId });
    busy = false;
    return wf.condition(wf.allHandlersFinished);
  }

  /** The deposit as it ran before payments were decided here: counts payment signals (same commands as then). */
  async function signalPathDeposit(): Promise<void> {
    if (!(await wf.condition(() => payments > 0, seconds(input.depositWindowSeconds)))) {
      await fail('DEPOSIT_EXPIRED', 'no payment arrived within the deposit window');
      return;
    }
    for (;;) {
      // Counted before the activity: a replay sent right after its FAILED commit may be delivered in the same
      // activation as the activity's result, and signals are applied first.
      const seen = replays;
      track(await acts.reconcileDeposit({ operationId }));
      if (status === 'COMPLETED') return;
      // A failed reconciliation stays open: later payments are recorded, an operator's replay re-runs it.
      if (!(await wf.condition(() => replays > seen, seconds(input.replayWindowSeconds)))) return;
    }
  }

  switch (input.type) {
    case 'DEPOSIT': {
      if (decidesPayments) {
        await deposit();
        return status;
      }
      await signalPathDeposit();
      // A deposit started on the signal path that ends on this code closes like the others: what counted toward
      // it uncredited, and what nobody decided, becomes UNMATCHED. Histories that ended before have no marker.
      if (wf.patched(SIGNAL_PATH_CLOSES)) {
        await acquire();
        open = false;
        await acts.closeDeposit({ operationId });
        busy = false;
        await wf.condition(wf.allHandlersFinished);
      }
      return status;
    }
    case 'WITHDRAWAL': {
      // Its own database steps inside the workflow task, as a transfer settles (above); histories recorded before
      // scheduled them as activities, and replay so.
      const withdrawalSteps = wf.patched(WITHDRAWAL_STEPS_IN_TASK) ? inWorkflowTask : acts;
      const continueAsNew = async (pendingPayout: PendingPayout) => {
        // Decisions being applied finish first: a continued run does not see this one's handlers.
        await wf.condition(wf.allHandlersFinished);
        return wf.makeContinueAsNewFunc<typeof operationWorkflow>({
          typedSearchAttributes: wf.workflowInfo().typedSearchAttributes,
        })({ ...input, pendingPayout });
      };
      const resumed = input.pendingPayout;
      if (resumed) {
        // A run continued as new: reviewed, PROCESSING and sent before; only the payout's answer is left.
        status = 'PROCESSING';
      } else {
        if (input.requiresReview) {
          track(await withdrawalSteps.setOperationStatus({ operationId, status: 'ON_HOLD' }));
          await wf.condition(() => decision !== undefined);
          if (decision!.decision === 'REJECT') {
            await fail('HOLD_REJECTED', decision!.reason ?? 'the withdrawal was rejected in review', withdrawalSteps);
            return status;
          }
        }
        track(await withdrawalSteps.setOperationStatus({ operationId, status: 'PROCESSING' }));
      }
      const payout =
        resumed || wf.patched(PAYOUT_THROUGH_RAILS)
          ? await payThroughRails(operationId, withdrawalSteps, continueAsNew, resumed)
          : await acts.executePayout({ operationId });
      if (!payout.ok) {
        const failure = 'code' in payout ? payout : PAYOUT_REJECTED;
        await fail(failure.code, failure.message, withdrawalSteps);
        return status;
      }
      track(await withdrawalSteps.completeOperation({ operationId }));
      return status;
    }
    case 'SWAP':
    case 'TRANSFER': {
      try {
        track(await inWorkflowTask.completeOperation({ operationId }));
      } catch (err) {
        // Settlement refused for a business reason: give the reserved funds back.
        const cause = businessFailure(err);
        if (!cause) throw err;
        await fail(cause.type ?? 'SETTLEMENT_FAILED', cause.message);
      }
      return status;
    }
  }
}

const seconds = (s: number | undefined) => (s ?? 86400) * 1000;

/**
 * The non-retryable failure a step ended with: a scheduled activity's comes wrapped in an ActivityFailure, a local
 * activity's reaches the workflow as the ApplicationFailure itself. Anything else (a bug, a cancellation) is not
 * a business answer: undefined.
 */
function businessFailure(err: unknown): wf.ApplicationFailure | undefined {
  if (err instanceof wf.ActivityFailure) return err.cause instanceof wf.ApplicationFailure ? err.cause : undefined;
  return err instanceof wf.ApplicationFailure ? err : undefined;
}

// Withdrawals pay out through the PSP with its calls on the rails' task queue (before: one activity on the main
// queue did it all).
const PAYOUT_THROUGH_RAILS = 'payout-through-rails';
// A withdrawal's own database steps (its status, the payout order, the payout's record, its settlement or failure)
// run as local activities in the workflow task, as a transfer's settlement does; only the PSP's calls are
// dispatched, on the rails' queue. Each step is one short transaction with no outside effect, safe to run again (a
// withdrawal took about a quarter less CPU and Temporal's share nearly halved: decision 0098).
const WITHDRAWAL_STEPS_IN_TASK = 'withdrawal-database-steps-in-workflow-task';

// Withdrawals started from here on end their payout only on the PSP's final answer (decision 0108): its status reads
// go through pixFollowPayout (a payout the PSP does not show is sent again), a worker without a PSP fails the
// withdrawal RAIL_NOT_CONFIGURED instead of the workflow, and the reads continue as new once the history is long.
const PAYOUT_FINAL_ANSWERS = 'payout-ends-on-final-answer';

const PAYOUT_REJECTED = { code: 'PAYOUT_REJECTED', message: 'the receiving institution rejected the PIX payout' };

type PayoutOutcome = { ok: boolean; endToEnd: string } | { ok: false; code: string; message: string };

/**
 * Sends the payout under its idEnvio and reads its status until the PSP answers REALIZADO or NAO_REALIZADO. Only
 * a final answer is recorded: while it is pending (or the PSP cannot be reached) the operation stays PROCESSING,
 * because money may still leave. A PSP that refuses the payout outright sent nothing: FAILED. A worker with no PSP
 * sent nothing either: FAILED RAIL_NOT_CONFIGURED, with no rail transaction. While pending, the workflow continues
 * as new once its history is long (`continueAsNew`, which does not return); `resumed` is where the last run was.
 */
async function payThroughRails(
  operationId: string,
  steps: typeof acts,
  continueAsNew: (pending: PendingPayout) => Promise<never>,
  resumed?: PendingPayout,
): Promise<PayoutOutcome> {
  const order = await steps.payoutOrder({ operationId });
  if (order.recorded) return order.recorded;
  const rails = railCalls(order.taskQueue, order.rail);
  if (!resumed && !wf.patched(PAYOUT_FINAL_ANSWERS)) {
    // Withdrawals started before: the calls they made, but continued as new (onto the code above) when long.
    let state;
    try {
      state = await rails.sendPayout(order.request);
    } catch (err) {
      const refused = railRejection(err);
      if (!refused) throw err;
      return steps.recordPayout({ operationId, status: 'FAILED', reason: refused.message });
    }
    const pause = statusReadPauses();
    while (state.status === 'PENDING') {
      if (timeToContinueAsNew()) await continueAsNew({ waitMs: MAX_STATUS_READ_MS });
      await pause();
      state = await rails.payoutStatus({ payoutId: order.request.payoutId });
    }
    return steps.recordPayout({ operationId, status: state.status, endToEnd: state.endToEndId, reason: state.reason });
  }
  let state: PayoutState = { payoutId: order.request.payoutId, status: 'PENDING' };
  try {
    if (!resumed) state = await rails.sendPayout(order.request);
    let wait = resumed?.waitMs;
    while (state.status === 'PENDING') {
      if (timeToContinueAsNew()) await continueAsNew({ waitMs: wait ?? FIRST_STATUS_READ_MS });
      wait = await statusReadPause(wait);
      state = await rails.followPayout(order.request);
    }
  } catch (err) {
    const refused = railRejection(err);
    if (refused) return steps.recordPayout({ operationId, status: 'FAILED', reason: refused.message });
    const unconfigured = railNotConfigured(err);
    if (!unconfigured) throw err;
    return { ok: false, code: 'RAIL_NOT_CONFIGURED', message: unconfigured.message };
  }
  return steps.recordPayout({ operationId, status: state.status, endToEnd: state.endToEndId, reason: state.reason });
}
