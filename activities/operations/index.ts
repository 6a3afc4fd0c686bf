import type { ActivityDeps } from '../deps';
import { createDepositActivities } from './deposit';
import { createOperationStatusActivities } from './status';
import { createWithdrawalActivities } from './withdrawal';

/** The operation workflow's steps, by kind: the status steps every kind takes, a deposit's, a withdrawal's. */
export function createOperationActivities(deps: ActivityDeps) {
  return {
    ...createOperationStatusActivities(deps),
    ...createDepositActivities(deps),
    ...createWithdrawalActivities(deps),
  };
}
