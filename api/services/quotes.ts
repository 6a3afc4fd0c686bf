import { randomUUID } from 'node:crypto';
import type { Em } from '../../db/orm';
import { AccountSchema } from '../../db/entities';
import type { AssetCode } from '../../domain/assets';
import { checkAmountLimit, parseAmountValue } from '../../domain/money';
import { computeQuote, formatRate } from '../../domain/quote-math';
import type { RateSource } from '../../domain/rates';
import { errorBody, notFound } from '../errors';
import { keyInUse, keyReused } from '../middleware/idempotency';
import { insertQuoteOnce } from '../../db/repositories/quote-once';
import { insertQuoteOfAccount, PricedQuote } from '../../db/repositories/quotes';
import { presentQuote } from '../presenters/quote';

export interface CreateQuote {
  accountId: string;
  sourceAsset: AssetCode;
  targetAsset: AssetCode;
  sourceAmount?: string;
  targetAmount?: string;
}

/**
 * Prices a quote for `ttlSeconds` (no database): what it costs, what it yields, when it expires. Throws the
 * pricing errors (amount, precision, limits).
 */
export function priceQuote(rates: RateSource, ttlSeconds: number, input: CreateQuote): PricedQuote {
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
  return {
    id: randomUUID(),
    accountId: input.accountId,
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
}

// The 404 the statement stores when the account is not the caller's: the body `notFound('account')` renders, made
// once (an Error per request, with its stack, is a measurable share of a quote's CPU).
const ACCOUNT_NOT_FOUND_BODY = errorBody(notFound('account'));

export type QuoteAnswer = { kind: 'answer'; status: number; body: unknown; replayed: boolean } | { kind: 'use-transaction' };

/**
 * The quote request in one statement (db/repositories/quote-once.ts): key, account check, stored response and
 * quote. Answers `use-transaction` when the request needs the general path (`createQuote` inside
 * api/middleware/idempotency.ts): a pricing error, whose 404-first rule needs the account read first, and the
 * rare key committed by another request after our snapshot, which that path replays.
 * Locks a rate bound to one account of the caller's; which assets an operation may use is checked when the quote
 * is consumed, because a deposit's source asset is the one paid in, not one the account holds.
 */
export async function createQuoteOnce(em: Em, rates: RateSource, ttlSeconds: number, input: CreateQuote, request: { key: string; requestHash: string }): Promise<QuoteAnswer> {
  let quote: PricedQuote;
  try {
    quote = priceQuote(rates, ttlSeconds, input);
  } catch {
    return { kind: 'use-transaction' };
  }
  const outcome = await insertQuoteOnce(em, quote, { ...request, createdBody: (q) => presentQuote(q, ''), notFoundBody: ACCOUNT_NOT_FOUND_BODY });
  switch (outcome.kind) {
    case 'busy':
      throw keyInUse();
    case 'stored':
      if (outcome.stored.requestHash !== request.requestHash) throw keyReused();
      return { kind: 'answer', status: outcome.stored.status, body: outcome.stored.body, replayed: true };
    case 'raced':
      return { kind: 'use-transaction' };
    case 'account-not-found':
      throw notFound('account');
    case 'created': {
      const body = outcome.createdBody as ReturnType<typeof presentQuote>;
      return { kind: 'answer', status: 201, body: { ...body, account: { ...body.account, owner: outcome.accountOwner } }, replayed: false };
    }
  }
}

/** The quote request inside the request's transaction (the general path; see `createQuoteOnce`). */
export async function createQuote(em: Em, rates: RateSource, ttlSeconds: number, input: CreateQuote) {
  let quote: PricedQuote;
  try {
    quote = priceQuote(rates, ttlSeconds, input);
  } catch (err) {
    // An unknown account answers 404 before a pricing error, as it always has.
    if ((await em.count(AccountSchema, { id: input.accountId })) === 0) throw notFound('account');
    throw err;
  }
  // The account check and the insert are one statement, the handler's only write.
  const written = await insertQuoteOfAccount(em, quote);
  if (!written) throw notFound('account');
  return presentQuote(written.quote, written.owner);
}
