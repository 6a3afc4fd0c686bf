// Compliance review of an account: the customer submits (POST /review), a reviewer decides (CLI, or the
// customer in sandbox mode), the review workflow applies the decision. Every submission is a new round with its
// own workflow id, because workflow ids are never reused (REJECT_DUPLICATE).
import { randomUUID } from 'node:crypto';
import type { Deps } from './deps';
import type { Em } from '../db/orm';
import type { Account } from '../db/entities/account';
import { computeRequirements, readyForReview, Requirement } from '../domain/requirements';
import { checkReason, MAX_REASON_LENGTH, reviewRound, transition } from '../domain/states';
import { accountReviewWorkflowId } from '../workflows/ids';
import type { AccountDecision } from '../workflows/account-review';
import { customerIdKey } from '../workflows/search-attributes';
import { CambioError } from '../domain/errors';
import { recordWorkflowStart, WorkflowStartRequest } from '../db/repositories/outbox';
import { recordDecision, sendDecision } from './decisions';
import { findAccount, loadParts, AccountRecord, recordOf } from './accounts';
import { pollUntil } from './poll';
import { freshEm, inTransaction } from '../db/transaction';

type ReviewServices = Pick<Deps, 'orm' | 'temporal' | 'config'>;

function reviewWorkflowStart(account: Account): WorkflowStartRequest {
  return {
    workflowId: accountReviewWorkflowId(account.id, reviewRound(account)),
    workflowType: 'accountReviewWorkflow',
    args: [{ accountId: account.id, customerId: account.customerId }],
    searchAttributes: { [customerIdKey.name]: account.customerId },
    summary: `ACCOUNT REVIEW round ${reviewRound(account)} of ${account.legalName}`,
  };
}

const brief = (r: Requirement) => ({
  documentType: r.documentType,
  uboId: r.uboId,
  ...(r.reason ? { reason: r.reason } : {}),
});

/**
 * ACTION_REQUIRED → UNDER_REVIEW and the review workflow's start, in one transaction (outbox), then the start
 * itself. Rejected UBOs go back to PENDING: they are up for verification again in the new round.
 */
export async function submitReview(services: ReviewServices, em: Em, accountId: string): Promise<AccountRecord> {
  return inTransaction(em, async (tx) => {
    const account = await findAccount(tx, accountId, true);
    if (account.status !== 'ACTION_REQUIRED') {
      throw new CambioError(
        'INVALID_STATE',
        `account is ${account.status}; only an ACTION_REQUIRED account can be submitted for review`,
        {
          status: account.status,
        },
      );
    }
    const { ubos, documents } = (await loadParts(tx, [accountId])).get(accountId)!;
    const requirements = computeRequirements(
      ubos.map((u) => u.id),
      documents,
    );
    if (!readyForReview(requirements)) {
      throw new CambioError(
        'REQUIREMENTS_NOT_MET',
        'documents are missing or were rejected; upload them before submitting',
        {
          currentlyDue: requirements.currentlyDue.map(brief),
          errors: requirements.errors.map(brief),
        },
      );
    }
    const now = new Date();
    transition(account, 'UNDER_REVIEW', now);
    for (const ubo of ubos) if (ubo.status === 'REJECTED') transition(ubo, 'PENDING', now);
    await recordWorkflowStart(tx, services.config.taskQueue, reviewWorkflowStart(account));
    return { account, ubos, documents };
  });
}

/**
 * Records a reviewer's decision for the account's current review round in `tx` (db/repositories/workflow-decisions):
 * nothing reaches the workflow before it commits. `decisionId` names the row (fixed by the request for the sandbox
 * route, so its retry finds it). `round`, when given, is the round the reviewer read: a decision meant for it is
 * refused once the customer has resubmitted (decision 0355).
 */
export async function recordAccountDecision(
  services: Pick<ReviewServices, 'config'>,
  tx: Em,
  accountId: string,
  decision: AccountDecision,
  who: { decisionId: string; actor: string; round?: number },
): Promise<void> {
  const { reason } = decision;
  checkReason(reason, MAX_REASON_LENGTH);
  await recordDecision(services, tx, who.decisionId, accountId, who.actor, async () => {
    const account = await findAccount(tx, accountId, true);
    assertUnderReview(account);
    assertRound(account, who.round);
    const start = reviewWorkflowStart(account);
    return {
      kind: 'ACCOUNT_REVIEW',
      workflowId: start.workflowId,
      customerId: account.customerId,
      decision: decision.decision,
      reason,
      start,
    };
  });
}

/** After COMMIT: the signal naming the decision, then the account once the workflow applied it. */
export async function applyAccountDecision(services: ReviewServices, em: Em, accountId: string, decisionId: string) {
  await sendDecision(services, decisionId);
  return waitUntilDecided(em, accountId);
}

/** The operator CLI's decision (for the round it names, if any): recorded in a transaction of its own, then sent. */
export async function decideAccountReview(
  services: ReviewServices,
  em: Em,
  accountId: string,
  decision: AccountDecision,
  actor: string,
  round?: number,
): Promise<AccountRecord> {
  const decisionId = randomUUID();
  const who = { decisionId, actor, round };
  await inTransaction(em, (tx) => recordAccountDecision(services, tx, accountId, decision, who));
  return applyAccountDecision(services, em, accountId, decisionId);
}

/** 409 INVALID_STATE when the reviewer read another round than the account is in (the customer resubmitted since). */
function assertRound(account: Account, round: number | undefined): void {
  const current = reviewRound(account);
  if (round !== undefined && round !== current) {
    throw new CambioError(
      'INVALID_STATE',
      `account is in review round ${current}, not ${round}: the customer resubmitted; read it again before deciding`,
      { round: current },
    );
  }
}

function assertUnderReview(account: Account): void {
  if (account.status !== 'UNDER_REVIEW') {
    throw new CambioError(
      'INVALID_STATE',
      `account is ${account.status}; only an account UNDER_REVIEW can be decided`,
      { status: account.status },
    );
  }
}

async function waitUntilDecided(em: Em, accountId: string): Promise<AccountRecord> {
  // A fresh identity map per read (same connection): the old one would keep serving the row read before the signal.
  const { fresh, account } = await pollUntil(
    async () => {
      const fork = freshEm(em);
      return { fresh: fork, account: await findAccount(fork, accountId) };
    },
    ({ account: a }) => a.status !== 'UNDER_REVIEW',
  );
  return recordOf(fresh, account);
}
