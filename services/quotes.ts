import { randomUUID } from 'node:crypto';
import type { Em } from '../db/orm';
import type { Quote } from '../db/entities';
import type { AssetCode } from '../domain/assets';
import { checkAmountLimit, parseAmountValue } from '../domain/money';
import { computeQuote, formatRate } from '../domain/quote-math';
import { provenanceOf, type RateBook, type RateSource } from '../domain/rates';
import { CambioError, notFound } from '../domain/errors';
import { countRatesRefusedQuote } from './metrics';
import { keyInUse, keyReused } from './errors';
import { insertKeyedQuote } from '../db/repositories/keyed-quote';
import type { PricedQuote } from '../db/repositories/quotes';

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

// A run that finds the key committed by another request after its snapshot runs again and replays that answer; a
// third run only guards against a row that expired between.
const MAX_RUNS = 3;

/**
 * How the caller words the key's answers, which the one statement stores with the quote: the route's HTTP status
 * and body (api/routes/quotes.ts), so that presenting stays at the edge.
 */
export interface QuoteAnswers {
  /** The answer of a priced quote, from the quote as written (the statement fills in `account.owner`). */
  created: (quote: Quote) => object;
  /** The answer of a pricing error, or undefined for an error that is not the key's answer (nothing is stored). */
  refused: (err: unknown) => { status: number; body: unknown } | undefined;
  /** The answer when the account is not the caller's, stored whatever else this request is. */
  accountNotFound: object;
}

/** The key's answer: a replay of a stored one, or this request's (a 201's body with its account's name apart). */
export type QuoteAnswer =
  | { replayed: true; status: number; body: unknown }
  | { replayed: false; status: 201; body: unknown; accountOwner: string };

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
  answers: QuoteAnswers,
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
  const answer = quote ? { status: 201 as const, body: answers.created } : answers.refused(pricingError);
  for (let run = 1; ; run++) {
    const outcome = await insertKeyedQuote(em, quote, {
      ...request,
      accountId: input.accountId,
      answer,
      notFoundBody: answers.accountNotFound,
    });
    switch (outcome.kind) {
      case 'busy':
        throw keyInUse();
      case 'stored':
        if (outcome.stored.requestHash !== request.requestHash) throw keyReused();
        return { replayed: true, status: outcome.stored.status, body: outcome.stored.body };
      case 'raced':
        if (run < MAX_RUNS) continue;
        throw new Error('the quote key kept changing under its statement');
      case 'account-not-found':
        throw notFound('account');
      case 'answered': {
        if (!quote) throw pricingError;
        return { replayed: false, status: 201, body: outcome.body, accountOwner: outcome.accountOwner };
      }
    }
  }
}
