import { randomUUID } from 'node:crypto';
import type { Em } from '../db/orm';
import type { Quote } from '../db/entities';
import type { AssetCode } from '../domain/assets';
import { checkAmountLimit, parseAmountValue } from '../domain/money';
import { computeQuote, formatRate } from '../domain/quote-math';
import { provenanceOf, type RateBook, type RateSource } from '../domain/rates';
import { CambioError } from '../domain/errors';
import { countRatesRefusedQuote } from '../api/observability/metrics';
import { errorBody, notFound } from '../api/errors';
import { keyInUse, keyReused, storedErrorAnswer } from '../api/middleware/idempotency';
import { insertKeyedQuote } from '../db/repositories/keyed-quote';
import type { PricedQuote } from '../db/repositories/quotes';
import { presentQuote } from '../api/presenters/quote';

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
    sourceAmount:
      input.sourceAmount === undefined
        ? undefined
        : parseAmountValue(input.sourceAmount, input.sourceAsset, { path: '/sourceAmount' }),
    targetAmount:
      input.targetAmount === undefined
        ? undefined
        : parseAmountValue(input.targetAmount, input.targetAsset, { path: '/targetAmount' }),
  });
  // The derived side is bounded like a requested one: 10^15 - 1 USD in PHP would not be.
  checkAmountLimit(result.sourceAmount, input.sourceAsset, '/sourceAmount');
  checkAmountLimit(result.targetAmount, input.targetAsset, '/targetAmount');
  const provenance = provenanceOf(rates, input.sourceAsset, input.targetAsset);
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
    rateSource: provenance.source,
    rateSourceTime: provenance.sourceTime,
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

// A run that finds the key committed by another request after its snapshot runs again and replays that answer; a
// third run only guards against a row that expired between.
const MAX_RUNS = 3;

export interface QuoteAnswer {
  status: number;
  body: unknown;
  replayed: boolean;
}

/**
 * The quote request, in one statement under its idempotency key (db/repositories/keyed-quote.ts): key, account
 * check, stored answer and quote. An unknown account answers 404 before a pricing error, and both are stored as the
 * key's answer, as any business error is; an error that is not the key's answer (a malformed amount) stores only a
 * 404 for an unknown account. Locks a rate bound to one account of the caller's; which assets an operation may use
 * is checked when the quote is consumed, because a deposit's source asset is the one paid in, not one the account
 * holds.
 */
export async function createQuote(
  em: Em,
  book: RateBook,
  ttlSeconds: number,
  input: CreateQuote,
  request: { key: string; requestHash: string },
): Promise<QuoteAnswer> {
  let quote: PricedQuote | undefined;
  let pricingError: unknown;
  try {
    // The rates of this second (a process cache, rates/book.ts): never a query per quote, never a source's call.
    quote = priceQuote(await book.current(), ttlSeconds, input);
  } catch (err) {
    pricingError = err;
    if (err instanceof CambioError && err.code === 'RATES_UNAVAILABLE')
      countRatesRefusedQuote(String(err.details.asset));
  }
  const answer = quote
    ? { status: 201 as const, body: (q: Quote) => presentQuote(q, '') }
    : storedErrorAnswer(pricingError);
  for (let run = 1; ; run++) {
    const outcome = await insertKeyedQuote(em, quote, {
      ...request,
      accountId: input.accountId,
      answer,
      notFoundBody: ACCOUNT_NOT_FOUND_BODY,
    });
    switch (outcome.kind) {
      case 'busy':
        throw keyInUse();
      case 'stored':
        if (outcome.stored.requestHash !== request.requestHash) throw keyReused();
        return { status: outcome.stored.status, body: outcome.stored.body, replayed: true };
      case 'raced':
        if (run < MAX_RUNS) continue;
        throw new Error('the quote key kept changing under its statement');
      case 'account-not-found':
        throw notFound('account');
      case 'answered': {
        if (!quote) throw pricingError;
        const body = outcome.body as ReturnType<typeof presentQuote>;
        const account = { ...body.account, owner: outcome.accountOwner };
        return { status: 201, body: { ...body, account }, replayed: false };
      }
    }
  }
}
