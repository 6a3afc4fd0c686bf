import type { RouteTable } from './define';
import type { ServiceContext } from '../services/context';
import { createQuoteBody } from '../schemas/quotes';
import { createQuote, CreateQuote } from '../services/quotes';
import { ref } from '../schemas/responses';

export function quoteRoutes(table: RouteTable, s: ServiceContext): void {
  table.add({
    method: 'post',
    path: '/api/quotes',
    summary: 'Lock a rate for one operation on an account (fixed source or fixed target amount)',
    tag: 'Quotes',
    body: createQuoteBody,
    bodyRequired: true,
    response: { status: 201, schema: ref('Quote'), description: 'The quote' },
    errors: ['INVALID_AMOUNT', 'INVALID_AMOUNT_PRECISION'],
    // createQuote checks the account and prices before its single insert (no savepoint needed).
    writesOnceLast: true,
    async handler(ctx) {
      ctx.body = await createQuote(ctx.state.em, s.rates, s.config.quoteTtlSeconds, ctx.request.body as CreateQuote);
      ctx.status = 201;
    },
  });
}
