// One compliance review round of an account: started when the customer submits the account (UNDER_REVIEW),
// it waits for a reviewer's decision (an operator through the CLI, or the customer in sandbox mode) and applies
// it in one activity. A rejected account is resubmitted as a new round with a new workflow id.
import * as wf from '@temporalio/workflow';
import type { AccountReviewActivities } from '../activities/account-review';
import { ignoredSignals, onDecisions } from './decision';
import { accountReviewRound } from './ids';

export interface AccountReviewInput {
  accountId: string;
  customerId: string;
}

export interface AccountDecision {
  decision: 'APPROVE' | 'REJECT';
  reason?: string;
}

export type AccountReviewStatus = 'AWAITING_DECISION' | 'APPLYING' | 'ACTIVE' | 'ACTION_REQUIRED';

/** Obeyed only by rounds started before decisions were rows (their histories must replay); ignored since. */
export const accountDecisionSignal = wf.defineSignal<[AccountDecision]>('accountDecision');
// Named apart from other workflows' status queries so `export *` in workflows/index.ts stays unambiguous.
export const accountReviewStatusQuery = wf.defineQuery<AccountReviewStatus>('status');

// The activity is one short transaction; retried (with the default backoff) until it commits, and idempotent.
const { applyAccountReview } = wf.proxyActivities<AccountReviewActivities>({ startToCloseTimeout: '30s' });

// Rounds started from here on act only on decisions recorded in the database (workflows/decision.ts).
const DECISIONS_ARE_ROWS = 'account-review-decisions-are-rows';

export async function accountReviewWorkflow(input: AccountReviewInput): Promise<AccountReviewStatus> {
  let status: AccountReviewStatus = 'AWAITING_DECISION';
  let decision: AccountDecision | undefined;
  wf.setHandler(accountReviewStatusQuery, () => status);
  const rowsOnly = wf.patched(DECISIONS_ARE_ROWS);
  const ignore = ignoredSignals();
  const take = (d: AccountDecision) => {
    // The first decision wins; a second reviewer racing the first is ignored rather than flipping the outcome.
    if (decision) {
      wf.log.warn('ignoring a second decision for the same review round', {
        accountId: input.accountId,
        decision: d.decision,
      });
      return;
    }
    decision = d;
  };
  wf.setHandler(accountDecisionSignal, (d) => {
    if (rowsOnly) return ignore('accountDecision', 'a decision is a recorded row, named by the decision signal');
    take(d);
  });
  onDecisions('ACCOUNT_REVIEW', ignore, (d) =>
    take({ decision: d.decision ?? 'REJECT', ...(d.reason !== undefined ? { reason: d.reason } : {}) }),
  );

  // No timeout: a review waits for a human as long as it takes.
  await wf.condition(() => decision !== undefined);
  const { decision: verdict, reason } = decision!;
  status = 'APPLYING';
  // With its round: a retry of this activity after the customer resubmitted must not decide the next round.
  const round = accountReviewRound(wf.workflowInfo().workflowId);
  const applied = await applyAccountReview({ accountId: input.accountId, decision: verdict, reason, round });
  status = applied === 'ACTIVE' ? 'ACTIVE' : 'ACTION_REQUIRED';
  return status;
}
