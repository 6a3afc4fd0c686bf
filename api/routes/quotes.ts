import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { createQuoteBody } from '../schemas/quotes';
import { createQuote, CreateQuote, type QuoteAnswers } from '../../services/quotes';
import { answerReplay, requestHashOf, storedErrorAnswer } from '../middleware/idempotency';
import { errorBody } from '../errors';
import { notFound } from '../../domain/errors';
import { presentQuote, withAccountOwner } from '../../presenters/quote';
import { crashPoint } from '../../services/crash-point';
import { ref } from '../schemas/responses';

// The answers the quote's one statement stores under its key. The 404 is made once (an Error per request, with its
// stack, is a measurable share of a quote's CPU).
const QUOTE_ANSWERS: QuoteAnswers = {
  created: (quote) => presentQuote(quote, ''),
  refused: storedErrorAnswer,
  accountNotFound: errorBody(notFound('account')),
};

export function quoteRoutes(table: RouteTable, s: ServiceContext): void {
  table.add({
    method: 'post',
    path: '/api/quotes',
    summary: 'Lock a rate for one operation on an account (fixed source or fixed target amount)',
    tag: 'Quotes',
    body: createQuoteBody,
    bodyRequired: true,
    response: { status: 201, schema: ref('Quote'), description: 'The quote' },
    // NOT_FOUND: the body names an account the customer does not have.
    // RATES_UNAVAILABLE: no usable market rate for a leg now (a stale primary, a deviation, no source).
    errors: ['INVALID_AMOUNT', 'INVALID_AMOUNT_PRECISION', 'NOT_FOUND', 'RATES_UNAVAILABLE'],
    // One statement holds the key, checks the account, stores the answer and writes the quote.
    ownsIdempotency: true,
    async handler(ctx) {
      const input = ctx.request.body as CreateQuote;
      const key: string = ctx.state.idempotencyKey;
      const answer = await createQuote(
        ctx.state.em,
        s.rates,
        s.config.quoteTtlSeconds,
        input,
        {
          key,
          requestHash: requestHashOf(ctx),
        },
        QUOTE_ANSWERS,
      );
      crashPoint('after-commit');
      if (answer.replayed) answerReplay(ctx, answer.status, answer.body);
      else {
        ctx.status = answer.status;
        ctx.body = withAccountOwner(answer.body as ReturnType<typeof presentQuote>, answer.accountOwner);
      }
    },
  });
}
