// The messages a withdrawal, swap or transfer takes: a hold decision, as a recorded row named by the `decision`
// signal (or, for operations started before decisions were rows, the holdDecision signal). A deposit's payments and
// replays are ignored here and listed (`ignoredSignals`).
import * as wf from '@temporalio/workflow';
import { ignoredSignals, onDecisions } from '../decision';
import {
  holdDecisionSignal,
  inboundPaymentSignal,
  inboundPaymentUpdate,
  replaySignal,
  type HoldDecision,
} from './contract';

/**
 * Sets the handlers of an operation that is not a deposit, before its first await and in the order the histories
 * recorded them; returns the first hold decision taken (undefined until one is). `rowsOnly`: decisions only as rows.
 */
export function takeHoldDecisions(rowsOnly: boolean): () => HoldDecision | undefined {
  let decision: HoldDecision | undefined;
  const ignore = ignoredSignals();
  wf.setHandler(inboundPaymentSignal, async () =>
    ignore('inboundPayment', 'payments reach a deposit through the inboundPaymentUpdate'),
  );
  wf.setHandler(replaySignal, () => {
    // Before decisions were rows, a replay was taken and never read: only a deposit replays.
    if (rowsOnly) return ignore('replay', 'a replay is a recorded row, named by the decision signal');
  });
  wf.setHandler(holdDecisionSignal, (d) => {
    if (rowsOnly) return ignore('holdDecision', 'a decision is a recorded row, named by the decision signal');
    decision ??= d;
  });
  onDecisions('HOLD', ignore, (d) => {
    decision ??= { decision: d.decision ?? 'REJECT', ...(d.reason !== undefined ? { reason: d.reason } : {}) };
  });
  // Registered so that the update is refused by its validator (nothing recorded), as it always was.
  wf.setHandler(inboundPaymentUpdate, async () => 'IGNORED', {
    validator: (_payment: { paymentId: string }) => {
      throw new Error('only a deposit takes inbound payments');
    },
  });
  return () => decision;
}
