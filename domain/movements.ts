import type { Dec } from './money';
import type { PostedOperation } from './postings';

export type MovementDirection = 'INFLOW' | 'OUTFLOW';

export interface MovementLeg {
  accountId: string;
  asset: string;
  direction: MovementDirection;
  amount: Dec;
}

/**
 * What a completed operation moved on the customer's accounts (decision 0031): a deposit is an
 * inflow of the credited (target) amount; a withdrawal an outflow of the debited (source) amount; a swap an
 * outflow of its source and an inflow of its target on the same account; a transfer an outflow on the source
 * account and an inflow on the target account. Fees are inside those amounts.
 */
export function movementLegs(op: PostedOperation & { id: string }): MovementLeg[] {
  const outflow: MovementLeg = {
    accountId: op.accountId,
    asset: op.sourceAsset,
    direction: 'OUTFLOW',
    amount: op.sourceAmount,
  };
  const inflowTo = (accountId: string): MovementLeg => ({
    accountId,
    asset: op.targetAsset,
    direction: 'INFLOW',
    amount: op.targetAmount,
  });
  switch (op.type) {
    case 'DEPOSIT':
      return [inflowTo(op.accountId)];
    case 'WITHDRAWAL':
      return [outflow];
    case 'SWAP':
      return [outflow, inflowTo(op.accountId)];
    case 'TRANSFER':
      if (!op.targetAccountId) throw new Error(`transfer ${op.id} has no target account`);
      return [outflow, inflowTo(op.targetAccountId)];
  }
}
