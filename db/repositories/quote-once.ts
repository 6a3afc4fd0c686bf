import type { Quote } from '../entities';
import type { Em } from '../orm';
import { rawQuery } from '../raw';
import { advisoryLockId, IDEMPOTENCY_TTL_HOURS, REPLACEABLE, StoredResponse } from './idempotency';

export interface QuoteRequest {
  key: string;
  requestHash: string;
  /** The 201 body with any `account.owner` (the statement puts the account's name there). */
  createdBody: object;
  /** The body of the 404 stored when the account is not the caller's. */
  notFoundBody: object;
}

export type QuoteOnce =
  /** A live request holds the key. */
  | { kind: 'busy' }
  /** The key already answered (for this request or, if the hash differs, another). */
  | { kind: 'stored'; stored: StoredResponse }
  /** Written now, quote and response: the account's name for the body. */
  | { kind: 'created'; accountOwner: string }
  /** No such account in the caller's scope; the 404 is stored as the key's answer. */
  | { kind: 'account-not-found' }
  /** The key was committed by another request after this statement's snapshot: nothing written, ask again. */
  | { kind: 'raced' };

/**
 * A quote request in ONE statement, in its own implicit transaction: the key's advisory lock, its stored answer,
 * the account check (in the caller's scope), the stored response and the quote. It keeps every guarantee of the
 * request transaction (api/middleware/idempotency.ts) in one round trip instead of five, because a quote's only
 * write is its last step and everything it checks fits in SQL:
 * - the advisory lock is held until the statement ends, so a second request with the key gets `busy`;
 * - the response row is inserted before the quote, and the quote is inserted only from the row it returns, so a
 *   key that another request committed after our snapshot (the conflict is resolved against the latest row, not
 *   the snapshot) makes the statement write nothing at all: `raced`;
 * - the statement commits as a whole or not at all; a process that dies around it leaves either both rows or
 *   neither, and the lock dies with the connection.
 */
export async function insertQuoteOnce(em: Em, quote: Quote, request: QuoteRequest): Promise<QuoteOnce> {
  const rows = await rawQuery<{
    locked: boolean;
    request_hash: string | null;
    response_status: number | null;
    response_body: unknown;
    account_owner: string | null;
    stored: number;
  }>(
    em,
    `with lk as materialized (select pg_try_advisory_xact_lock($1::bigint) as locked),
     prior as materialized (
       select k.request_hash, k.response_status, k.response_body
       from idempotency_keys k join lk on lk.locked
       where k.customer_id = $2 and k.key = $3 and k.state = 'DONE' and k.expires_at > now()
     ),
     fresh as materialized (select true as go from lk where lk.locked and not exists (select 1 from prior)),
     a as materialized (
       select acc.id, acc.customer_id, acc.legal_name from accounts acc join fresh on true
       where acc.id = $4 and acc.customer_id = $2
     ),
     k as (
       insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body, created_at, expires_at)
       select $2, $3, $5, 'DONE',
         case when a.id is null then 404 else 201 end,
         case when a.id is null then $6::jsonb else jsonb_set($7::jsonb, '{account,owner}', to_jsonb(a.legal_name)) end,
         now(), now() + interval '${IDEMPOTENCY_TTL_HOURS} hours'
       from fresh left join a on true
       on conflict (customer_id, key) do update
         set request_hash = excluded.request_hash, state = 'DONE', response_status = excluded.response_status,
             response_body = excluded.response_body, created_at = excluded.created_at, expires_at = excluded.expires_at
         where ${REPLACEABLE}
       returning response_status
     ),
     q as (
       insert into quotes (id, customer_id, account_id, source_asset, source_amount, target_asset, target_amount, mid_rate,
         effective_rate, spread, fee_amount, expires_at, consumed_at, consumed_by, created_at)
       select $8::uuid, a.customer_id, a.id, $9::varchar, $10::numeric, $11::varchar, $12::numeric, $13::varchar,
         $14::varchar, $15::varchar, $16::numeric, $17::timestamptz, null, null, $18::timestamptz
       from a join k on k.response_status = 201
       returning id
     )
     select lk.locked, p.request_hash, p.response_status, p.response_body, a.legal_name as account_owner,
       (select count(*) from k)::int as stored
     from lk left join prior p on true left join a on true`,
    [
      advisoryLockId(quote.customerId, request.key), quote.customerId, request.key, quote.accountId,
      request.requestHash, JSON.stringify(request.notFoundBody), JSON.stringify(request.createdBody),
      quote.id, quote.sourceAsset, quote.sourceAmount.toFixed(), quote.targetAsset, quote.targetAmount.toFixed(),
      quote.midRate, quote.effectiveRate, quote.spread, quote.feeAmount === null ? null : quote.feeAmount.toFixed(),
      quote.expiresAt, quote.createdAt,
    ],
    { prepared: 'cambio-quote-once' },
  );
  const row = rows[0];
  if (!row.locked) return { kind: 'busy' };
  if (row.request_hash !== null) {
    return { kind: 'stored', stored: { requestHash: row.request_hash, status: row.response_status!, body: row.response_body } };
  }
  if (row.stored === 0) return { kind: 'raced' };
  return row.account_owner === null ? { kind: 'account-not-found' } : { kind: 'created', accountOwner: row.account_owner };
}
