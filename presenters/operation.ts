import type { Page } from '../lists/run-list';
import type { Operation } from '../db/entities';
import { currentState } from '../domain/states';
import { amount } from '../domain/amount';

/** Spec Operation, from its row alone. */
export function presentOperation(op: Operation) {
  return {
    id: op.id,
    customerId: op.customerId,
    account: { id: op.accountId, owner: op.accountOwner },
    sourceAmount: amount(op.sourceAmount, op.sourceAsset),
    targetAmount: amount(op.targetAmount, op.targetAsset),
    intent: op.intent,
    quote: op.quoteRef,
    fees: op.fees.map(({ amount: a, source, createdAt }) => ({ amount: a, source, createdAt })),
    transactions: op.transactions.map(({ id, direction, amount: a, status }) => ({ id, direction, amount: a, status })),
    currentState: currentState(op.states),
    states: op.states,
    tags: op.tags,
    createdAt: op.createdAt.toISOString(),
    updatedAt: op.updatedAt.toISOString(),
  };
}

/** A page of operations as the list shows it. */
export const presentOperations = (page: Page<Operation>) => ({
  data: page.data.map(presentOperation),
  meta: page.meta,
});
