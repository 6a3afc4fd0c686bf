import { randomUUID } from 'node:crypto';
import type { Em } from '../../db/orm';
import { AccountSchema, Quote, QuoteSchema } from '../../db/entities';
import type { AssetCode } from '../../domain/assets';
import { checkAmountLimit, parseAmountValue } from '../../domain/money';
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
  const account = await em.findOne(AccountSchema, { id: input.accountId }, { fields: ['id', 'customerId', 'legalName'] });
  if (!account) throw notFound('account');
  const result = computeQuote({
    rates,
    sourceAsset: input.sourceAsset,
    targetAsset: input.targetAsset,
    sourceAmount: input.sourceAmount === undefined ? undefined : parseAmountValue(input.sourceAmount, input.sourceAsset, { path: '/sourceAmount' }),
    targetAmount: input.targetAmount === undefined ? undefined : parseAmountValue(input.targetAmount, input.targetAsset, { path: '/targetAmount' }),
  });
  // The derived side is bounded like a requested one: 10^15 - 1 USD in PHP would not be.
  checkAmountLimit(result.sourceAmount, input.sourceAsset, '/sourceAmount');
  checkAmountLimit(result.targetAmount, input.targetAsset, '/targetAmount');
  const now = new Date();
  const quote: Quote = {
    id: randomUUID(),
    customerId: account.customerId,
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
  // A plain insert: one statement, no unit-of-work flush or transaction around a single row.
  await em.insert(QuoteSchema, quote);
  return presentQuote(quote, account.legalName);
}
