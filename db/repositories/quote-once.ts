// The quote request in one statement (the one-statement quote trick: the idempotency key, the account check, the
// stored answer and the quote in one round trip). How it reaches Postgres: straight through the driver (db/raw.ts),
// prepared, in its own implicit transaction. Tenant: the customer comes from the EntityManager's scope
// (`tenantOf`), for the key, the account check and the rows it writes.
import type { Quote } from '../entities';
import { Em, tenantOf } from '../orm';
import { numbered, rawQuery } from '../raw';
import { PricedQuote, QUOTE_COLUMNS, QUOTE_PLACEHOLDERS, quoteValues } from './quotes';
import { advisoryLockId, answersFor, EXPIRES_AT, REPLACE_UNLESS_ANSWERING, StoredAnswer } from './idempotency';

export interface QuoteRequest {
  key: string;
  requestHash: string;
  /** The 201 body of the quote as written, with any `account.owner` (the statement puts the account's name there). */
  createdBody: (quote: Quote) => object;
  /** The body of the 404 stored when the account is not the caller's. */
  notFoundBody: object;
}

export type QuoteOnce =
  /** A live request holds the key. */
  | { kind: 'busy' }
  /** The key already answered (for this request or, if the hash differs, another). */
  | { kind: 'stored'; stored: StoredAnswer }
  /** Written now, quote and response: the account's name for the body. */
  | { kind: 'created'; createdBody: object; accountOwner: string }
  /** No such account in the caller's scope; the 404 is stored as the key's answer. */
  | { kind: 'account-not-found' }
  /** The key was committed by another request after this statement's snapshot: nothing written, ask again. */
  | { kind: 'raced' };

// Parameters, in order: lock id; customer, key (stored answer); account, customer (the caller's account);
// customer, key, request hash, 404 body, 201 body (the answer); the quote's values (db/repositories/quotes.ts).
const STATEMENT = numbered(`
  with lk as materialized (select pg_try_advisory_xact_lock(?::bigint) as locked),
  prior as materialized (
    select k.request_hash, k.response_status, k.response_body
    from idempotency_keys k join lk on lk.locked
    where k.customer_id = ?::uuid and k.key = ?::uuid and ${answersFor('k')}
  ),
  fresh as materialized (select true as go from lk where lk.locked and not exists (select 1 from prior)),
  a as materialized (
    select acc.id, acc.legal_name from accounts acc join fresh on true
    where acc.id = ?::uuid and acc.customer_id = ?::uuid
  ),
  k as (
    insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body, created_at, expires_at)
    select ?::uuid, ?::uuid, ?::varchar, 'DONE',
      case when a.id is null then 404 else 201 end,
      case when a.id is null then ?::jsonb else jsonb_set(?::jsonb, '{account,owner}', to_jsonb(a.legal_name)) end,
      now(), ${EXPIRES_AT}
    from fresh left join a on true
    ${REPLACE_UNLESS_ANSWERING}
    returning response_status
  ),
  q as (
    insert into quotes (${QUOTE_COLUMNS})
    select ${QUOTE_PLACEHOLDERS} from a join k on k.response_status = 201
    returning id
  )
  select lk.locked, p.request_hash, p.response_status, p.response_body, a.legal_name as account_owner,
    (select count(*) from k)::int as stored
  from lk left join prior p on true left join a on true`);

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
export async function insertQuoteOnce(em: Em, quote: PricedQuote, request: QuoteRequest): Promise<QuoteOnce> {
  const customerId = tenantOf(em);
  const createdBody = request.createdBody({ ...quote, customerId });
  const rows = await rawQuery<{
    locked: boolean;
    request_hash: string | null;
    response_status: number | null;
    response_body: unknown;
    account_owner: string | null;
    stored: number;
  }>(
    em,
    STATEMENT,
    [
      advisoryLockId(customerId, request.key),
      customerId, request.key,
      quote.accountId, customerId,
      customerId, request.key, request.requestHash, JSON.stringify(request.notFoundBody), JSON.stringify(createdBody),
      ...quoteValues(quote, customerId),
    ],
    { prepared: 'cambio-quote-once' },
  );
  const row = rows[0];
  if (!row.locked) return { kind: 'busy' };
  if (row.request_hash !== null) {
    return { kind: 'stored', stored: { requestHash: row.request_hash, status: row.response_status!, body: row.response_body } };
  }
  if (row.stored === 0) return { kind: 'raced' };
  return row.account_owner === null ? { kind: 'account-not-found' } : { kind: 'created', createdBody, accountOwner: row.account_owner };
}
