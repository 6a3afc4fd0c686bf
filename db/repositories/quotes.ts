import type { Quote } from '../entities';

// A quote row as every statement that writes one spells it: the quote POST (alone or in its single idempotent
// statement) and the operation create (a transfer's generated quote). One list, so a new column cannot be missed
// in one of them.

/** The `quotes` columns, in the order of `quoteValues`. */
export const QUOTE_COLUMNS =
  'id, customer_id, account_id, source_asset, source_amount, target_asset, target_amount, mid_rate, effective_rate, spread, fee_amount, expires_at, consumed_at, consumed_by, created_at';

/** `?` placeholders for `quoteValues`, typed, so they also serve in an `insert ... select`, where no column types them. */
export const QUOTE_PLACEHOLDERS =
  '?::uuid, ?::uuid, ?::uuid, ?::varchar, ?::numeric, ?::varchar, ?::numeric, ?::varchar, ?::varchar, ?::varchar, ?::numeric, ?::timestamptz, ?::timestamptz, ?::uuid, ?::timestamptz';

/** The row's values, money as exact decimal strings. */
export function quoteValues(q: Quote): unknown[] {
  return [
    q.id, q.customerId, q.accountId, q.sourceAsset, q.sourceAmount.toFixed(), q.targetAsset, q.targetAmount.toFixed(), q.midRate,
    q.effectiveRate, q.spread, q.feeAmount === null ? null : q.feeAmount.toFixed(), q.expiresAt, q.consumedAt, q.consumedBy, q.createdAt,
  ];
}
