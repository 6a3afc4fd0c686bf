import { randomUUID } from 'node:crypto';
import { Em, tenantOf } from '../../db/orm';
import { Quote } from '../../db/entities';
import type { AssetCode } from '../../domain/assets';
import { parseAmountValue } from '../../domain/money';
import { computeQuote, formatRate } from '../../domain/quote-math';
import type { RateSource } from '../../domain/rates';
import { notFound } from '../errors';
import { presentQuote } from '../presenters/quote';

export interface CreateQuote {
  accountId: string;
  sourceAsset: AssetCode;
  targetAsset: AssetCode;
  sourceAmount?: string;
  targetAmount?: string;
}

/**
 * Locks a rate for `ttlSeconds`. The quote is bound to one account of the caller's; which assets an
 * operation may use is checked when the quote is consumed, because a deposit's source asset is the one
 * paid in, not one the account holds.
 */
export async function createQuote(em: Em, rates: RateSource, ttlSeconds: number, input: CreateQuote) {
  // Plain SQL on the hot path (no unit of work, no hydration); the tenant condition comes from the em's scope.
  const [account] = await em.execute<Array<{ id: string; legal_name: string }>>(
    'select id, legal_name from accounts where id = ? and customer_id = ?',
    [input.accountId, tenantOf(em)],
  );
  if (!account) throw notFound('account');
  const result = computeQuote({
    rates,
    sourceAsset: input.sourceAsset,
    targetAsset: input.targetAsset,
    sourceAmount: input.sourceAmount === undefined ? undefined : parseAmountValue(input.sourceAmount, input.sourceAsset, { path: '/sourceAmount' }),
    targetAmount: input.targetAmount === undefined ? undefined : parseAmountValue(input.targetAmount, input.targetAsset, { path: '/targetAmount' }),
  });
  const now = new Date();
  const quote: Quote = {
    id: randomUUID(),
    customerId: tenantOf(em),
    accountId: account.id,
    sourceAsset: input.sourceAsset,
    sourceAmount: result.sourceAmount,
    targetAsset: input.targetAsset,
    targetAmount: result.targetAmount,
    midRate: formatRate(result.midRate),
    effectiveRate: formatRate(result.effectiveRate),
    spread: result.spread.toFixed(),
    feeAmount: result.fee ? result.fee.amount : null,
    expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    consumedAt: null,
    consumedBy: null,
    createdAt: now,
  };
  // The handler's only write and its last statement: every business error above comes before it (the route
  // relies on this to run without a savepoint, see api/routes/quotes.ts).
  await em.execute(
    `insert into quotes (id, customer_id, account_id, source_asset, source_amount, target_asset, target_amount, mid_rate,
       effective_rate, spread, fee_amount, expires_at, consumed_at, consumed_by, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, null, ?)`,
    [
      quote.id, quote.customerId, quote.accountId, quote.sourceAsset, quote.sourceAmount.toFixed(), quote.targetAsset, quote.targetAmount.toFixed(),
      quote.midRate, quote.effectiveRate, quote.spread, quote.feeAmount === null ? null : quote.feeAmount.toFixed(), quote.expiresAt, quote.createdAt,
    ],
  );
  return presentQuote(quote, account.legal_name);
}
