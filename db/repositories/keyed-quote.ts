// The quote request in one statement (the one-statement quote trick: the idempotency key, the account check, the
// stored answer and the quote in one round trip), which carries every quote request waiting at that moment
// (db/statement-batch.ts). How it reaches Postgres: straight through the driver (db/raw.ts), prepared, in its own
// implicit transaction. Tenant: each request's row carries the customer of its EntityManager's scope (`tenantOf`),
// and the key, the account check and the rows it writes are that customer's.
import type { Quote } from '../entities';
import { Em, tenantOf } from '../orm';
import { numbered, Pool, poolOf } from '../raw';
import { StatementBatch } from '../statement-batch';
import { PricedQuote, QUOTE_COLUMN_LIST, QUOTE_COLUMNS, quoteRecord } from './quotes';
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

// Its one parameter is a JSON array with one object per request (`StatementRow`): the key's lock id, customer, key
// and request hash; the account to check; the answer's status and body; the 404 body stored for an account that is
// not the caller's; the quote's columns by name (db/repositories/quotes.ts), or null. Every CTE keeps the request's
// number `i`, and the statement answers one row per request, in that order. Each lookup by key is a lateral
// subquery with `limit 1`, so it stays a lookup per request in the prepared plan: as a join, a plan made while the
// table was small scanned all of it for every batch, and kept doing so as it grew.
const STATEMENT = numbered(`
  with r as materialized (
    select * from jsonb_to_recordset(?::jsonb) as r(i int, lock_id bigint, customer_id uuid, key uuid,
      request_hash varchar, account_id uuid, status int, body jsonb, not_found_body jsonb, quote jsonb)
  ),
  lk as materialized (select r.i, pg_try_advisory_xact_lock(r.lock_id) as locked from r),
  prior as materialized (
    select r.i, k.request_hash, k.response_status, k.response_body
    from r join lk on lk.i = r.i and lk.locked
    cross join lateral (
      select k.request_hash, k.response_status, k.response_body from idempotency_keys k
      where k.customer_id = r.customer_id and k.key = r.key and ${answersFor('k')}
      limit 1
    ) k
  ),
  fresh as materialized (
    select r.* from r join lk on lk.i = r.i and lk.locked where not exists (select 1 from prior p where p.i = r.i)
  ),
  a as materialized (
    select f.i, acc.legal_name from fresh f
    cross join lateral (
      select acc.legal_name from accounts acc where acc.id = f.account_id and acc.customer_id = f.customer_id
      limit 1
    ) acc
  ),
  k as (
    insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body, created_at,
      expires_at)
    select f.customer_id, f.key, f.request_hash, 'DONE',
      case when a.i is null then 404 else f.status end,
      case
        when a.i is null then f.not_found_body
        when f.status = 201 then jsonb_set(f.body, '{account,owner}', to_jsonb(a.legal_name))
        else f.body
      end,
      now(), ${EXPIRES_AT}
    from fresh f left join a on a.i = f.i
    where a.i is null or f.status is not null
    ${REPLACE_UNLESS_ANSWERING}
    returning customer_id, key, response_status
  ),
  q as (
    insert into quotes (${QUOTE_COLUMNS})
    select ${QUOTE_COLUMN_LIST.map((c) => `p.${c}`).join(', ')}
    from fresh f join a on a.i = f.i
    join k on k.customer_id = f.customer_id and k.key = f.key and k.response_status = 201
    cross join jsonb_populate_record(null::quotes, f.quote) p
    returning id
  )
  select r.i, lk.locked, p.request_hash, p.response_status, p.response_body, a.legal_name as account_owner,
    k.key is not null as stored
  from r join lk on lk.i = r.i left join prior p on p.i = r.i left join a on a.i = r.i
  left join k on k.customer_id = r.customer_id and k.key = r.key
  order by r.i`);

interface StatementRow {
  lock_id: string;
  customer_id: string;
  key: string;
  request_hash: string;
  account_id: string;
  status: number | null;
  body: unknown;
  not_found_body: object;
  quote: Record<string, unknown> | null;
}

interface AnswerRow {
  i: number;
  locked: boolean;
  request_hash: string | null;
  response_status: number | null;
  response_body: unknown;
  account_owner: string | null;
  stored: boolean;
}

// At most two statements at Postgres at once, of at most 100 requests each: enough to keep a request waiting
// no longer than one statement, and to let Postgres work on one batch while the API fills the next. A request
// whose key another request of this process holds is answered as the key's lock answers it: busy.
const BATCH_LIMITS = {
  maxInFlight: 2,
  maxRows: 100,
  busy: (): AnswerRow => ({
    i: -1,
    locked: false,
    request_hash: null,
    response_status: null,
    response_body: null,
    account_owner: null,
    stored: false,
  }),
};

// One batcher per pool (per ORM): a test or a process with two ORMs keeps their batches apart.
const batches = new WeakMap<Pool, StatementBatch<StatementRow, AnswerRow>>();

function batchOn(pool: Pool): StatementBatch<StatementRow, AnswerRow> {
  let batch = batches.get(pool);
  if (!batch) {
    batch = new StatementBatch(
      async (rows) => {
        const document = JSON.stringify(rows.map((row, i) => ({ ...row, i })));
        const answers = await pool.query<AnswerRow>(STATEMENT, [document], { prepared: 'cambio-keyed-quotes' });
        if (answers.length !== rows.length) throw new Error('the quote statement answered for other rows');
        return answers;
      },
      (row) => row.lock_id,
      BATCH_LIMITS,
    );
    batches.set(pool, batch);
  }
  return batch;
}

/**
 * A quote request in ONE statement, in its own implicit transaction: the key's advisory lock, its stored answer,
 * the account check (in the caller's scope), the stored answer and the quote. It keeps every guarantee of the
 * request transaction (db/keyed-transaction.ts) in one round trip instead of five, because a quote's only
 * write is its last step and everything it checks fits in SQL. The statement may carry other requests' rows too;
 * each row's outcome is its own, and none of them shares a key with another:
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
  const row = await batchOn(poolOf(em)).submit({
    lock_id: advisoryLockId(customerId, request.key),
    customer_id: customerId,
    key: request.key,
    request_hash: request.requestHash,
    account_id: request.accountId,
    status: answer?.status ?? null,
    body: body ?? null,
    not_found_body: request.notFoundBody,
    quote: quote ? quoteRecord(quote, customerId) : null,
  });
  if (!row.locked) return { kind: 'busy' };
  if (row.request_hash !== null) {
    return {
      kind: 'stored',
      stored: { requestHash: row.request_hash, status: row.response_status!, body: row.response_body },
    };
  }
  const found = row.account_owner !== null;
  if (!row.stored && (!found || answer)) return { kind: 'raced' };
  return found ? { kind: 'answered', body, accountOwner: row.account_owner! } : { kind: 'account-not-found' };
}
