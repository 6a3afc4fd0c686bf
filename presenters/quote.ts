import type { Quote } from '../db/entities';
import { amount } from '../domain/amount';
import { rateOfQuote } from '../services/quote-reference';

export function presentQuote(q: Quote, accountOwner: string) {
  return {
    id: q.id,
    customerId: q.customerId,
    account: { id: q.accountId, owner: accountOwner },
    sourceAmount: amount(q.sourceAmount, q.sourceAsset),
    targetAmount: amount(q.targetAmount, q.targetAsset),
    effectiveRate: rateOfQuote(q),
    expiresAt: q.expiresAt.toISOString(),
  };
}

/** A quote's body as the keyed statement stored it, with its account's name (which the statement reads). */
export function withAccountOwner(body: ReturnType<typeof presentQuote>, accountOwner: string) {
  return { ...body, account: { ...body.account, owner: accountOwner } };
}
