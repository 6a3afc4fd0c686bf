// A deposit's life in its operation's workflow: it waits for its payments, decides each one, reconciles, and closes.
import * as wf from '@temporalio/workflow';
import type { DecisionActivities } from '../../activities/decisions';
import type { DepositActivities } from '../../activities/operations/deposit';
import type { OperationStatusActivities } from '../../activities/operations/status';
import { ignoredSignals, onDecisions } from '../decision';
import {
  holdDecisionSignal,
  inboundPaymentSignal,
  inboundPaymentUpdate,
  replaySignal,
  type OperationWorkflowInput,
} from './contract';
import { SCHEDULED_STEP, STEP_IN_WORKFLOW_TASK, type TrackedStatus } from './database-steps';

/** What a deposit's workflow runs: its own steps, its failure, and the check of a legacy payment signal. */
type DepositSteps = DepositActivities &
  Pick<OperationStatusActivities, 'failOperation'> &
  Pick<DecisionActivities, 'paymentRecordedFor'>;

const acts = wf.proxyActivities<DepositSteps>(SCHEDULED_STEP);
const inWorkflowTask = wf.proxyLocalActivities<DepositSteps>(STEP_IN_WORKFLOW_TASK);

// Deposits started before inbound payments were decided by the workflow keep the signal-and-count path.
const DECIDES_PAYMENTS = 'deposit-decides-inbound-payments';
// Signal-path deposits still running when this code arrived close like the others when they end.
const SIGNAL_PATH_CLOSES = 'signal-path-deposit-closes';
// Deposits started from here on run their own database steps as local activities (decision 0098).
const DEPOSIT_STEPS_IN_TASK = 'deposit-database-steps-in-workflow-task';
// A signal-path deposit counts an `inboundPayment` signal only if it names a payment recorded for it.
const PAYMENT_SIGNALS_CHECKED = 'signal-path-payment-signals-checked';
// Deposits started from here on take their payments only as INBOUND_PAYMENT decision rows, not by the update.
const PAYMENTS_ARE_ROWS = 'deposit-payments-are-rows';
// Deposits started from here on decide a payment and reconcile with it in one step, and close in the step that
// completes them (decision 0157).
const PAYMENT_TAKEN_IN_ONE_STEP = 'deposit-payment-taken-in-one-step';
// Deposits started from here on let a decision signal taken with a window's end reach its step before the window
// closes the deposit (decision 0338).
const DECISIONS_BEFORE_WINDOW_CLOSE = 'deposit-decisions-before-window-close';
// Deposits started from here on end their window when their creation said, however late their workflow started
// (decision 0339).
const WINDOW_FROM_CREATION = 'deposit-window-from-creation';
// Deposits started from here on count their replay window from the failure, not again from each failed replay
// (decision 0342).
const REPLAY_WINDOW_FROM_FAILURE = 'deposit-replay-window-from-failure';
// How long a deposit whose workflow started after its window's end waits for the signals of payments recorded before.
const LATE_START_GRACE_MS = 10_000;

/**
 * A deposit, from REQUESTED to COMPLETED, or FAILED and closed. `rowsOnly`: it takes replays only as recorded rows
 * (workflows/decision.ts). Handlers are set before the first await, in the order the histories recorded them.
 */
export async function depositOperation(
  input: OperationWorkflowInput,
  op: TrackedStatus,
  rowsOnly: boolean,
): Promise<string> {
  const { operationId } = input;
  let payments = 0;
  let replays = 0;
  // `open` until it completes, expires or its replay window closes; one step at a time (`busy`) among the payment
  // updates and the workflow's own reconciliations, so each decision sees the state the last one left.
  let open = true;
  let busy = false;
  const acquire = async () => {
    // Re-checked after each wake-up: two waiters woken in one activation must not both take it.
    while (busy) await wf.condition(() => !busy);
    busy = true;
  };
  // Decided before any handler runs: a payment signal delivered with the first task must see which path this is.
  const decidesPayments = wf.patched(DECIDES_PAYMENTS);
  const legacy = !decidesPayments;
  const paymentsAreRows = wf.patched(PAYMENTS_ARE_ROWS);
  // A deposit's own database steps (deciding a payment, reconciling, closing, expiring) inside the workflow task;
  // deposits started before scheduled them as activities, and replay so.
  const depositSteps = wf.patched(DEPOSIT_STEPS_IN_TASK) ? inWorkflowTask : acts;
  // Deposits started before decided, reconciled and closed in three steps, and replay so.
  const oneStep = wf.patched(PAYMENT_TAKEN_IN_ONE_STEP);
  // Deposits started before closed at a window's end even with a decision's row still being read, and replay so.
  const decisionsFirst = wf.patched(DECISIONS_BEFORE_WINDOW_CLOSE);
  // Deposits started before timed their window from their workflow's start, and replay so.
  const windowFromCreation = wf.patched(WINDOW_FROM_CREATION);
  // Deposits started before gave each failed replay a whole replay window again, and replay so.
  const replayFromFailure = wf.patched(REPLAY_WINDOW_FROM_FAILURE);
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
  // A deposit takes no hold decision: before decisions were rows, the signal was taken and never read.
  wf.setHandler(holdDecisionSignal, () => {
    if (rowsOnly) return ignore('holdDecision', 'a decision is a recorded row, named by the decision signal');
  });

  /** Decides one payment recorded for this deposit, then reconciles a deposit still waiting for its money. */
  const decidePayment = async (paymentId: string): Promise<string> => {
    await acquire();
    try {
      if (oneStep) {
        // Only a deposit still waiting for its money reconciles at once; a FAILED one waits for an operator's replay.
        const reconcile = open && op.status === 'REQUESTED';
        const taken = await inWorkflowTask.takeInboundPayment({ operationId, paymentId, open, reconcile });
        if (taken.reconciled) op.track(taken.reconciled);
        if (taken.reconciled === 'COMPLETED') open = false;
        return taken.decided;
      }
      const decided = await depositSteps.decideInboundPayment({ operationId, paymentId, open });
      if (legacy) payments++;
      // A deposit still waiting for its money reconciles at once; a FAILED one waits for an operator's replay.
      else if (open && op.status === 'REQUESTED') {
        op.track(await depositSteps.reconcileDeposit({ operationId }));
        if ((op.status as string) === 'COMPLETED') open = false;
      }
      return decided;
    } finally {
      busy = false;
    }
  };

  // Every deposit takes payment rows, those started before too (a history records what an activity answered, not
  // what it was asked, so asking for both kinds replays). Results recorded before have no kind: replays.
  const decisions = onDecisions(['DEPOSIT_REPLAY', 'INBOUND_PAYMENT'], ignore, async (d) => {
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
    replays++;
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
        if (typeof paymentId !== 'string' || !paymentId) throw new Error('paymentId is required');
      },
    },
  );

  /**
   * Before a window's end closes the deposit: a decision signal taken in the same workflow task as the window's timer
   * is still reading its row (the handler runs first, up to that read), and the close would take the lock before
   * it; the payment, recorded and signalled in time, would find the deposit closed. Its step goes first now.
   */
  const decisionsRead = async () => {
    if (decisionsFirst) await wf.condition(() => decisions.reading() === 0);
  };

  /** The deposit's life once payments are decided here: wait, reconcile on replays, close. */
  async function deposit(): Promise<void> {
    // The payment updates reconcile while it waits; the window ends it unless one of them did. Its end is the one
    // its creation named, however late the workflow started (an outage of Temporal past it).
    const endsAt = windowFromCreation && input.depositWindowEndsAt ? Date.parse(input.depositWindowEndsAt) : NaN;
    const windowMs = Number.isFinite(endsAt) ? endsAt - Date.now() : seconds(input.depositWindowSeconds);
    // Started after that end, it still waits a moment: the payments recorded while its start waited reach it by the
    // relay's signals, sent right after the start, and a payment recorded in the window completes it (decision 0339).
    const lateStartGraceMs = Math.min(LATE_START_GRACE_MS, seconds(input.depositWindowSeconds) / 4);
    await wf.condition(() => op.status !== 'REQUESTED', windowMs > 0 ? windowMs : lateStartGraceMs);
    // A payment its provider took before the charge expired may still be on its way (decision 0191). Deposits
    // started before have no lateArrivalSeconds and replay the same commands.
    if (op.status === 'REQUESTED' && input.lateArrivalSeconds) {
      await wf.condition(() => op.status !== 'REQUESTED', input.lateArrivalSeconds * 1000);
    }
    await decisionsRead();
    await acquire();
    if (op.status === 'REQUESTED') {
      open = false;
      await op.fail(depositSteps, 'DEPOSIT_EXPIRED', 'no payment arrived within the deposit window');
      await depositSteps.closeDeposit({ operationId });
      busy = false;
      return wf.condition(wf.allHandlersFinished);
    }
    busy = false;
    let handled = 0;
    // "Replayable for 7 days" from the failure: a replay that fails again (still short) does not open another window,
    // which would keep the deposit taking payments at its quote's rate for as long as replays fail.
    const replayEndsAt = Date.now() + seconds(input.replayWindowSeconds);
    while (op.status !== 'COMPLETED') {
      // Every replay sent is followed by a reconciliation that starts after it; a spare one changes nothing.
      const waitMs = replayFromFailure ? replayEndsAt - Date.now() : seconds(input.replayWindowSeconds);
      const windowEnded = waitMs > 0 ? !(await wf.condition(() => replays > handled, waitMs)) : !(replays > handled);
      await decisionsRead();
      await acquire();
      // A replay read just now, with the window's end, counts: it was recorded and signalled within the window.
      if (windowEnded && !(decisionsFirst && replays > handled)) {
        open = false;
        await depositSteps.closeDeposit({ operationId });
        busy = false;
        return wf.condition(wf.allHandlersFinished);
      }
      handled = replays;
      op.track(await depositSteps.reconcileDeposit({ operationId }));
      busy = false;
    }
    await acquire();
    open = false;
    // The step that completed it left no payment to close: every one it saw is credited or UNMATCHED, and one
    // recorded since is decided by its own signal (open is false now) or, once this workflow has ended, left
    // UNMATCHED by its sender (decision 0157).
    if (!oneStep) await depositSteps.closeDeposit({ operationId });
    busy = false;
    return wf.condition(wf.allHandlersFinished);
  }

  /** The deposit as it ran before payments were decided here: counts payment signals (same commands as then). */
  async function signalPathDeposit(): Promise<void> {
    if (!(await wf.condition(() => payments > 0, seconds(input.depositWindowSeconds)))) {
      await op.fail(acts, 'DEPOSIT_EXPIRED', 'no payment arrived within the deposit window');
      return;
    }
    for (;;) {
      // Counted before the activity: a replay sent right after its FAILED commit may be delivered in the same
      // activation as the activity's result, and signals are applied first.
      const seen = replays;
      op.track(await acts.reconcileDeposit({ operationId }));
      if (op.status === 'COMPLETED') return;
      // A failed reconciliation stays open: later payments are recorded, an operator's replay re-runs it.
      if (!(await wf.condition(() => replays > seen, seconds(input.replayWindowSeconds)))) return;
    }
  }

  if (decidesPayments) {
    await deposit();
    return op.status;
  }
  await signalPathDeposit();
  // A deposit started on the signal path that ends on this code closes like the others: what counted toward it
  // uncredited, and what nobody decided, becomes UNMATCHED. Histories that ended before have no marker.
  if (wf.patched(SIGNAL_PATH_CLOSES)) {
    await acquire();
    open = false;
    await acts.closeDeposit({ operationId });
    busy = false;
    await wf.condition(wf.allHandlersFinished);
  }
  return op.status;
}

/** A window in milliseconds; a day when the input has none. */
const seconds = (s: number | undefined) => (s ?? 86400) * 1000;
