import type { Quote } from '../../db/entities';
import { amount } from '../../domain/amount';

/** The quote's rate and which rates priced it (`source`, `sourceTime`: beyond the spec, docs/decisions/0115). */
export const presentRate = (q: Quote) => ({
  value: q.effectiveRate,
  base: q.sourceAsset,
  quote: q.targetAsset,
  source: q.rateSource,
  sourceTime: q.rateSourceTime ? q.rateSourceTime.toISOString() : null,
});

export function presentQuote(q: Quote, accountOwner: string) {
  return {
    id: q.id,
    customerId: q.customerId,
    account: { id: q.accountId, owner: accountOwner },
    sourceAmount: amount(q.sourceAmount, q.sourceAsset),
    targetAmount: amount(q.targetAmount, q.targetAsset),
    effectiveRate: presentRate(q),
    expiresAt: q.expiresAt.toISOString(),
  };
}

/** How a quote appears inside an operation. */
export const quoteReference = (q: Quote) => ({
  id: q.id,
  effectiveRate: presentRate(q),
  expiresAt: q.expiresAt.toISOString(),
  consumedAt: q.consumedAt ? q.consumedAt.toISOString() : null,
});
