import { validationError } from './errors';

export interface Reason {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** One entry of a resource's `states` history (spec: State entry). */
export interface StateEntry {
  status: string;
  createdAt: string;
  reason?: Reason;
}

/**
 * Moves a stateful record to `status`, appending to its history: `currentState` is always the last entry
 * of `states` (spec). Returns false, changing nothing, when it is already there, which is what makes a
 * retried activity harmless.
 */
export function transition(
  record: { status: string; states: StateEntry[]; updatedAt?: Date },
  status: string,
  at: Date,
  reason?: Reason,
): boolean {
  if (record.status === status) return false;
  record.status = status;
  record.states = [...record.states, { status, createdAt: at.toISOString(), ...(reason ? { reason } : {}) }];
  if ('updatedAt' in record) record.updatedAt = at;
  return true;
}

export const initialStates = (status: string, at: Date): StateEntry[] => [{ status, createdAt: at.toISOString() }];

export const currentState = (states: StateEntry[]): StateEntry => states[states.length - 1];

/** Round n of an account's compliance review is the n-th time it entered UNDER_REVIEW (its workflow id names n). */
export const reviewRound = (account: { states: StateEntry[] }): number =>
  account.states.filter((s) => s.status === 'UNDER_REVIEW').length;

// Reasons land in a varchar(255) column of account_documents; longer text is refused, not truncated.
export const MAX_REASON_LENGTH = 255;
// An instruction's or a held withdrawal's reason lives in its states only; the API's schemas allow 500 characters.
export const MAX_DECISION_REASON_LENGTH = 500;

/**
 * A reviewer's reason, checked in the service as the API's schema checks it (1 to `max` characters, not only
 * blanks): the operator CLI reaches the same service with no schema, and a rejection shown with an empty reason
 * tells the customer nothing.
 */
export function checkReason(reason: string | undefined, max: number): void {
  if (reason === undefined) return;
  if (reason.length === 0 || reason.length > max || !/\S/.test(reason))
    throw validationError('/reason', `must be 1 to ${max} characters, not only blanks`);
}
