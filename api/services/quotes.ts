import { randomUUID } from 'node:crypto';
import { Em, tenantOf } from '../../db/orm';
import { Quote } from '../../db/entities';
import type { AssetCode } from '../../domain/assets';
import { checkAmountLimit, parseAmountValue } from '../../domain/money';
import { computeQuote, formatRate } from '../../domain/quote-math';
import type { RateSource } from '../../domain/rates';
import { errorBody, notFound } from '../errors';
import { keyInUse, keyReused } from '../middleware/idempotency';
import { insertQuoteOnce } from '../../db/repositories/quote-once';
import { QUOTE_COLUMNS, QUOTE_PLACEHOLDERS, quoteValues } from '../../db/repositories/quotes';
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
export function priceQuote(customerId: string, rates: RateSource, ttlSeconds: number, input: CreateQuote): Quote {
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
    customerId,
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
  let quote: Quote;
  try {
    quote = priceQuote(tenantOf(em), rates, ttlSeconds, input);
  } catch {
    return { kind: 'use-transaction' };
  }
  const body = presentQuote(quote, '');
  const outcome = await insertQuoteOnce(em, quote, { ...request, createdBody: body, notFoundBody: ACCOUNT_NOT_FOUND_BODY });
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
    case 'created':
      return { kind: 'answer', status: 201, body: { ...body, account: { ...body.account, owner: outcome.accountOwner } }, replayed: false };
  }
}

/** The quote request inside the request's transaction (the general path; see `createQuoteOnce`). */
export async function createQuote(em: Em, rates: RateSource, ttlSeconds: number, input: CreateQuote) {
  // Plain SQL on the hot path (no unit of work, no hydration); the tenant condition comes from the em's scope.
  const customerId = tenantOf(em);
  let quote: Quote;
  try {
    quote = priceQuote(customerId, rates, ttlSeconds, input);
  } catch (err) {
    // An unknown account answers 404 before a pricing error, as it always has.
    const found = await em.execute('select 1 from accounts where id = ? and customer_id = ?', [input.accountId, customerId]);
    if (found.length === 0) throw notFound('account');
    throw err;
  }
  // One statement checks the account (in the caller's scope) and inserts the quote only if it exists: no account,
  // no row written and no row returned, so 404. This insert is the handler's only write and its last statement,
  // which lets the route run without a savepoint (api/routes/quotes.ts).
  const rows = await em.execute<Array<{ legal_name: string }>>(
    `with a as (select id, customer_id, legal_name from accounts where id = ? and customer_id = ?),
     q as (insert into quotes (${QUOTE_COLUMNS}) select ${QUOTE_PLACEHOLDERS} from a returning id)
     select a.legal_name from a, q`,
    [input.accountId, customerId, ...quoteValues(quote)],
  );
  if (rows.length === 0) throw notFound('account');
  return presentQuote(quote, rows[0].legal_name);
}
