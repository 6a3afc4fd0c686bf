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
  /** The account the quote is for, checked in the caller's scope. */
  accountId: string;
  key: string;
  requestHash: string;
  /**
   * The key's answer when the account is the caller's: a 201 and the body of the quote as written (the statement
   * puts the account's name in `account.owner`), a pricing error's answer (no quote is written), or none for an
   * error that is not the key's answer (nothing is stored). No such account: `notFoundBody`, stored, whatever this is.
   */
  answer: { status: 201; body: (quote: Quote) => object } | { status: number; body: unknown } | undefined;
  /** The body of the 404 stored when the account is not the caller's. */
  notFoundBody: object;
}

export type KeyedQuoteOutcome =
  /** A live request holds the key. */
  | { kind: 'busy' }
  /** The key already answered (for this request or, if the hash differs, another). */
  | { kind: 'stored'; stored: StoredAnswer }
  /** The account is the caller's and `answer` is stored (with its quote for a 201); the account's name for the body. */
  | { kind: 'answered'; body: unknown; accountOwner: string }
  /** No such account in the caller's scope; the 404 is stored as the key's answer. */
  | { kind: 'account-not-found' }
  /** The key was committed by another request after this statement's snapshot: nothing written, ask again. */
  | { kind: 'raced' };

// Parameters, in order: lock id; customer, key (stored answer); account, customer (the caller's account); the
// answer's status and body; customer, key, request hash, 404 body (the stored answer); the quote's values
// (db/repositories/quotes.ts), all null when there is no quote.
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
  ans as (select ?::int as status, ?::jsonb as body),
  k as (
    insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body, created_at,
      expires_at)
    select ?::uuid, ?::uuid, ?::varchar, 'DONE',
      case when a.id is null then 404 else ans.status end,
      case
        when a.id is null then ?::jsonb
        when ans.status = 201 then jsonb_set(ans.body, '{account,owner}', to_jsonb(a.legal_name))
        else ans.body
      end,
      now(), ${EXPIRES_AT}
    from fresh cross join ans left join a on true
    where a.id is null or ans.status is not null
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

const NO_QUOTE = new Array<null>(15).fill(null);

/**
 * A quote request in ONE statement, in its own implicit transaction: the key's advisory lock, its stored answer,
 * the account check (in the caller's scope), the stored answer and the quote. It keeps every guarantee of the
 * request transaction (db/keyed-transaction.ts) in one round trip instead of five, because a quote's only
 * write is its last step and everything it checks fits in SQL:
 * - the advisory lock is held until the statement ends, so a second request with the key gets `busy`;
 * - the answer row is inserted before the quote, and the quote is inserted only from the row it returns, so a
 *   key that another request committed after our snapshot (the conflict is resolved against the latest row, not
 *   the snapshot) makes the statement write nothing at all: `raced`;
 * - the statement commits as a whole or not at all; a process that dies around it leaves either both rows or
 *   neither, and the lock dies with the connection.
 * `quote` is undefined when pricing failed: then `request.answer` is the error's, or none.
 */
export async function insertKeyedQuote(
  em: Em,
  quote: PricedQuote | undefined,
  request: QuoteRequest,
): Promise<KeyedQuoteOutcome> {
  const customerId = tenantOf(em);
  const answer = request.answer;
  const body: unknown =
    answer && (typeof answer.body === 'function' ? answer.body({ ...quote!, customerId }) : answer.body);
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
      customerId,
      request.key,
      request.accountId,
      customerId,
      answer?.status ?? null,
      body === undefined ? null : JSON.stringify(body),
      customerId,
      request.key,
      request.requestHash,
      JSON.stringify(request.notFoundBody),
      ...(quote ? quoteValues(quote, customerId) : NO_QUOTE),
    ],
    { prepared: 'cambio-keyed-quote' },
  );
  const row = rows[0];
  if (!row.locked) return { kind: 'busy' };
  if (row.request_hash !== null) {
    return {
      kind: 'stored',
      stored: { requestHash: row.request_hash, status: row.response_status!, body: row.response_body },
    };
  }
  const found = row.account_owner !== null;
  if (row.stored === 0 && (!found || answer)) return { kind: 'raced' };
  return found ? { kind: 'answered', body, accountOwner: row.account_owner! } : { kind: 'account-not-found' };
}
