// Compliance review of an account: the customer submits (POST /review), a reviewer decides (CLI, or the
// customer in sandbox mode), the review workflow applies the decision. Every submission is a new round with its
// own workflow id, because workflow ids are never reused (REJECT_DUPLICATE).
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Deps } from '../deps';
import type { Em } from '../../db/orm';
import type { Account } from '../../db/entities/account';
import { computeRequirements, readyForReview, Requirement } from '../../domain/requirements';
import { transition } from '../../domain/states';
import { accountReviewWorkflowId } from '../../workflows/ids';
import { accountDecisionSignal, AccountDecision } from '../../workflows/account-review';
import { customerIdKey } from '../../workflows/search-attributes';
import { CambioError, validationError } from '../errors';
import { presentAccount, AccountView } from '../presenters/account';
import { MAX_REASON_LENGTH } from '../schemas/accounts';
import { recordWorkflowStart, WorkflowStartRequest } from '../../db/repositories/outbox';
import { startWorkflow } from '../../workflows/start';
import { findAccount, loadParts, viewOf } from './accounts';
import { pollUntil } from './poll';
import { freshEm, inTransaction } from '../../db/transaction';

type ReviewServices = Pick<Deps, 'orm' | 'temporal' | 'config'>;

/** Round n is the n-th time the account entered UNDER_REVIEW. */
const reviewRound = (account: Account) => account.states.filter((s) => s.status === 'UNDER_REVIEW').length;

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
export async function submitReview(services: ReviewServices, em: Em, accountId: string): Promise<AccountView> {
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
    return presentAccount(account, ubos, documents);
  });
}

/**
 * Delivers a reviewer's decision to the account's current review round and waits until the workflow applied
 * it. Used by the sandbox route (tenant em) and the operator CLI (the account's own tenant em).
 */
export async function decideAccountReview(
  services: ReviewServices,
  em: Em,
  accountId: string,
  decision: AccountDecision['decision'],
  reason?: string,
): Promise<AccountView> {
  if (reason !== undefined && (reason.length === 0 || reason.length > MAX_REASON_LENGTH)) {
    throw validationError('/reason', `must be 1 to ${MAX_REASON_LENGTH} characters`);
  }
  const account = await findAccount(em, accountId);
  assertUnderReview(account);
  const start = reviewWorkflowStart(account);
  const handle = services.temporal.workflow.getHandle(start.workflowId);
  const payload: AccountDecision = reason === undefined ? { decision } : { decision, reason };
  try {
    await handle.signal(accountDecisionSignal, payload);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    // Either a racing decision already closed this round, or its workflow is not started yet (the outbox row waits
    // for the worker's relay, or no worker is up); in the second case start this round now, as the relay would.
    assertUnderReview(await findAccount(freshEm(em), accountId));
    await startWorkflow(services.temporal, services.config.taskQueue, start);
    await handle.signal(accountDecisionSignal, payload);
  }
  return waitUntilDecided(em, accountId);
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

async function waitUntilDecided(em: Em, accountId: string): Promise<AccountView> {
  // A fresh identity map per read (same connection): the old one would keep serving the row read before the signal.
  const { fresh, account } = await pollUntil(
    async () => {
      const fork = freshEm(em);
      return { fresh: fork, account: await findAccount(fork, accountId) };
    },
    ({ account: a }) => a.status !== 'UNDER_REVIEW',
  );
  return viewOf(fresh, account);
}
