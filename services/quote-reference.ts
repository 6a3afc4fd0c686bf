import type { Quote } from '../db/entities';

// What an operation keeps of the quote it consumed (its `quoteRef` column, shown as the operation's `quote`), and
// the rate a quote's body shows: one shape for both, so an operation reads its quote as the quote read itself.

/** The quote's rate and which rates priced it (`source`, `sourceTime`: beyond the spec, docs/decisions/0115). */
export const rateOfQuote = (q: Quote) => ({
  value: q.effectiveRate,
  base: q.sourceAsset,
  quote: q.targetAsset,
  source: q.rateSource,
  sourceTime: q.rateSourceTime ? q.rateSourceTime.toISOString() : null,
});

/** How a quote appears inside an operation. */
export const quoteReference = (q: Quote) => ({
  id: q.id,
  effectiveRate: rateOfQuote(q),
  expiresAt: q.expiresAt.toISOString(),
  consumedAt: q.consumedAt ? q.consumedAt.toISOString() : null,
});
