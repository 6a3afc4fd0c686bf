// Quotes. How it reaches Postgres: hand-written statements, as statements of the caller's batch (db/batch.ts) in
// an operation's creation, or in the quote request's own statement (keyed-quote.ts). Tenant: a quote is written
// with the customer of the scope it was priced in and consumed by id after the creation read it, locked, in that
// scope
// (db/repositories/operations.ts, `readCreateInputs`). Every statement that writes a quote row spells it with
// QUOTE_COLUMNS and `quoteValues`, so a new column cannot be missed in one of them.
import type { SqlBatch } from '../batch';
import type { Quote } from '../entities';

/** A quote as priced, before it is written: its customer is the scope's that writes it. */
export type PricedQuote = Omit<Quote, 'customerId'>;

/** The `quotes` columns, in the order of `quoteValues`. */
export const QUOTE_COLUMN_LIST = [
  'id',
  'customer_id',
  'account_id',
  'source_asset',
  'source_amount',
  'target_asset',
  'target_amount',
  'mid_rate',
  'effective_rate',
  'spread',
  'fee_amount',
  'expires_at',
  'consumed_at',
  'consumed_by',
  'created_at',
  'rate_source',
  'rate_source_time',
] as const;

/** The `quotes` columns as SQL, in the order of `quoteValues`. */
export const QUOTE_COLUMNS = QUOTE_COLUMN_LIST.join(', ');

/** `?` placeholders for `quoteValues`, typed. */
export const QUOTE_PLACEHOLDERS =
  '?::uuid, ?::uuid, ?::uuid, ?::varchar, ?::numeric, ?::varchar, ?::numeric, ?::varchar, ?::varchar, ' +
  '?::varchar, ?::numeric, ?::timestamptz, ?::timestamptz, ?::uuid, ?::timestamptz, ?::text, ?::timestamptz';

/** The row's values, money as exact decimal strings. */
export function quoteValues(q: PricedQuote, customerId: string): unknown[] {
  return [
    q.id,
    customerId,
    q.accountId,
    q.sourceAsset,
    q.sourceAmount.toFixed(),
    q.targetAsset,
    q.targetAmount.toFixed(),
    q.midRate,
    q.effectiveRate,
    q.spread,
    q.feeAmount === null ? null : q.feeAmount.toFixed(),
    q.expiresAt,
    q.consumedAt,
    q.consumedBy,
    q.createdAt,
    q.rateSource,
    q.rateSourceTime,
  ];
}

/** The row as a JSON object by column name, for a statement that reads it with `jsonb_populate_record`. */
export function quoteRecord(q: PricedQuote, customerId: string): Record<string, unknown> {
  const values = quoteValues(q, customerId);
  return Object.fromEntries(QUOTE_COLUMN_LIST.map((column, i) => [column, values[i]]));
}

/** A new quote (a transfer's generated 1:1 quote), as a statement of the caller's batch. */
export function addQuote(batch: SqlBatch, q: Quote): void {
  batch.add(`insert into quotes (${QUOTE_COLUMNS}) values (${QUOTE_PLACEHOLDERS})`, quoteValues(q, q.customerId));
}

/** Marks a quote consumed by its operation, as a statement of the creation's batch. */
export function addQuoteConsumed(batch: SqlBatch, quote: Quote): void {
  batch.add('update quotes set consumed_at = ?, consumed_by = ? where id = ?', [
    quote.consumedAt,
    quote.consumedBy,
    quote.id,
  ]);
}
