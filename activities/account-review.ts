import { LockMode } from '@mikro-orm/core';
import { log } from '@temporalio/activity';
import { AccountDocumentSchema, AccountSchema, UboSchema } from '../db/entities/account';
import type { Em } from '../db/orm';
import type { Account } from '../db/entities/account';
import { DeliveryQueues, recordEvent } from '../db/repositories/events';
import { CambioError } from '../domain/errors';
import { reviewRound, transition } from '../domain/states';
import type { ActivityDeps } from './deps';
import { inActivityTransaction } from './failures';
import { assetActivatedPayload } from '../webhooks/asset-event';

export interface ApplyAccountReview {
  accountId: string;
  decision: 'APPROVE' | 'REJECT';
  reason?: string;
  /** The review round decided (absent in activities scheduled before rounds were passed: those decide any round). */
  round?: number;
}

const DEFAULT_REJECTION = 'rejected by compliance';

export function createAccountReviewActivities(deps: ActivityDeps) {
  return {
    /**
     * Applies a review decision in one transaction and returns the account's status afterwards. A retry after
     * the commit finds the account no longer UNDER_REVIEW and changes nothing (events are deduped as well).
     */
    async applyAccountReview(input: ApplyAccountReview): Promise<string> {
      return inActivityTransaction(deps.orm, async (em) => {
        const account = await em.findOne(
          AccountSchema,
          { id: input.accountId },
          { lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        if (!account) throw new CambioError('NOT_FOUND', `account ${input.accountId} not found`);
        if (account.status !== 'UNDER_REVIEW') return account.status;
        // A retry after COMMIT, once the customer resubmitted: this decision was for a round that ended.
        if (input.round !== undefined && reviewRound(account) !== input.round) {
          log.warn('a review decision for a round that ended was not applied to the next one', {
            accountId: account.id,
            decidedRound: input.round,
            currentRound: reviewRound(account),
          });
          return account.status;
        }
        const now = new Date();
        if (input.decision === 'APPROVE') await approve(em, deps.config, account, now);
        else await reject(em, account, input.reason ?? DEFAULT_REJECTION, now);
        return account.status;
      });
    },
  };
}

export type AccountReviewActivities = ReturnType<typeof createAccountReviewActivities>;

async function approve(em: Em, queues: DeliveryQueues, account: Account, now: Date): Promise<void> {
  transition(account, 'ACTIVE', now);
  // Assets activate together with the account: an account-level review covers every asset it asked for.
  account.assets = account.assets.map((a) => ({ ...a, status: 'ACTIVE' as const }));
  for (const ubo of await em.find(UboSchema, { accountId: account.id })) transition(ubo, 'VERIFIED', now);
  for (const doc of await em.find(AccountDocumentSchema, { accountId: account.id, status: 'PENDING_VERIFICATION' }))
    doc.status = 'ACCEPTED';
  for (const { asset } of account.assets) {
    await recordEvent(em, queues, {
      customerId: account.customerId,
      type: 'ASSET_ACTIVATED',
      resourceType: 'ASSET',
      resourceId: account.id,
      dedupeKey: `${account.id}:${asset}:ASSET_ACTIVATED`,
      payload: assetActivatedPayload({ customerId: account.customerId, accountId: account.id, asset, atTime: now }),
      atTime: now,
    });
  }
}

async function reject(em: Em, account: Account, reason: string, now: Date): Promise<void> {
  const rejected = { code: 'REVIEW_REJECTED', message: reason, details: {} };
  transition(account, 'ACTION_REQUIRED', now, rejected);
  for (const ubo of await em.find(UboSchema, { accountId: account.id })) transition(ubo, 'REJECTED', now, rejected);
  // Rejected documents surface under requirements.errors with this reason until the customer re-uploads.
  for (const doc of await em.find(AccountDocumentSchema, { accountId: account.id, status: 'PENDING_VERIFICATION' })) {
    doc.status = 'REJECTED';
    doc.reason = reason;
  }
}
