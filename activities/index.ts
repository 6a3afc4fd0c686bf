import { createAccountReviewActivities } from './account-review';
import type { ActivityDeps } from './deps';
import { createDecisionActivities } from './decisions';
import { createInstructionReviewActivities } from './instruction-review';
import { createOperationActivities } from './operations';
import { createWebhookActivities } from '../webhooks/delivery-activities';
import { createPeriodicActivities } from './periodic';

/** All activities, bound to their dependencies. Workflows `import type` this to proxy them. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createAccountReviewActivities(deps),
    ...createDecisionActivities(deps),
    ...createInstructionReviewActivities(deps),
    ...createOperationActivities(deps),
    ...createWebhookActivities(deps),
    ...createPeriodicActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
