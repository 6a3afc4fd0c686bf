import { createAccountReviewActivities } from './account-review';
import { createCryptoActivities } from './crypto';
import type { ActivityDeps } from './deps';
import { createDecisionActivities } from './decisions';
import { createHotWalletActivities } from './hot-wallet';
import { createInstructionReviewActivities } from './instruction-review';
import { createOperationActivities } from './operations';
import { createRailActivities } from './rails';
import { createReturnActivities } from './returns';
import { railsFromConfig } from '../rails';
import { createWebhookActivities } from '../webhooks/delivery-activities';
import { createPeriodicActivities } from './periodic';
import { createRateActivities } from './rates';
import { railStores } from './rail-stores';

/**
 * All activities, bound to their dependencies: what the worker registers. Each workflow proxies only the type of the
 * group it calls (`OperationStatusActivities`, `DepositActivities`, `RailActivities`, ...).
 */
export function createActivities(given: ActivityDeps) {
  // One set of connectors per process: the PIX client caches its OAuth2 token and keeps its connections.
  const deps = {
    ...given,
    rails: given.rails ?? railsFromConfig(given.config, undefined, railStores(given.orm, given.temporal, given.config)),
  };
  return {
    ...createAccountReviewActivities(deps),
    ...createDecisionActivities(deps),
    ...createInstructionReviewActivities(deps),
    ...createOperationActivities(deps),
    ...createWebhookActivities(deps),
    ...createPeriodicActivities(deps),
    ...createRailActivities(deps),
    ...createReturnActivities(deps),
    ...createRateActivities(deps),
    ...createCryptoActivities(deps),
    ...createHotWalletActivities(deps),
  };
}

/**
 * A webhook delivery's attempt, as webhooks/delivery-workflow.ts proxies it: named here because the sandbox reaches
 * activities/ (as types) but never the rest of webhooks/.
 */
export type WebhookDeliveryActivities = ReturnType<typeof createWebhookActivities>;
