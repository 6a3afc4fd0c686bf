// The signal that names a committed decision row (decision 0068), as both sides spell it: the workflows that take it
// (workflows/decision.ts, in the sandbox) and the client side that sends it (workflows/send-signal.ts). It imports
// nothing, so the client side names the signal without loading workflow code, and the sandbox without the client.

/** The signal's name, recorded in every history that took one: it never changes. */
export const DECISION_SIGNAL = 'decision';

/** What the signal carries: only the id of the row, which the workflow reads and validates. */
export interface DecisionRef {
  decisionId: string;
}
