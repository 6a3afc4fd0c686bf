// Idempotency keys: the stored answer of each (customer, key) and the advisory lock that marks a key as taken by
// a live request. How it reaches Postgres: hand-written statements of the caller's batch (db/batch.ts), in the
// request's transaction (db/keyed-transaction.ts); the quote's one statement (db/repositories/keyed-quote.ts) uses
// the same conditions; the read in front of a route's `prepare`, the key's creation instant and the purge are
// `em.execute` or, the purge, straight through the driver (db/raw.ts), outside any transaction. Tenant: the customer
// comes from the EntityManager's scope (`tenantOf`); the purge is system-wide on purpose (a system-scoped one).
import { createHash } from 'node:crypto';
import { Em, tenantOf } from '../orm';
import type { SqlBatch } from '../batch';
import { numbered, rawQuery } from '../raw';

// Decision 0010: keys are kept 24 h.
export const IDEMPOTENCY_TTL_HOURS = 24;

export interface StoredAnswer {
  requestHash: string;
  status: number;
  body: unknown;
}

export type KeyLock = { locked: false } | { locked: true; stored?: StoredAnswer };

/**
 * A signed 64-bit number for (customer, key): the id of the advisory lock that marks the key as taken by a
 * live request. A collision of two keys would only make one of them wait for the other (a 409), never mix
 * their results: the row is looked up by the key itself.
 */
export function advisoryLockId(customerId: string, key: string): string {
  return createHash('sha256').update(`idempotency:${customerId}:${key}`).digest().readBigInt64BE(0).toString();
}

/** Whether the key's row (alias `t`) still answers for the key: a stored response, not yet expired. */
export const answersFor = (t: string): string => `${t}.state = 'DONE' and ${t}.expires_at > now()`;

/** A new row's expiry. */
export const EXPIRES_AT = `now() + interval '${IDEMPOTENCY_TTL_HOURS} hours'`;

/**
 * The conflict clause of every insert of a stored answer: a row that no longer answers for its key (expired, or
 * STARTED: `keyStart`) is replaced; a row that still answers is kept, and the insert returns no row. A STARTED row
 * still within its 24 h keeps its creation instant (decision 0168): its key's ids derive from it.
 */
export const REPLACE_UNLESS_ANSWERING = `on conflict (customer_id, key) do update
  set request_hash = excluded.request_hash, state = 'DONE', response_status = excluded.response_status,
      response_body = excluded.response_body, expires_at = excluded.expires_at,
      created_at = case when idempotency_keys.expires_at > now() then idempotency_keys.created_at
                        else excluded.created_at end
  where not (${answersFor('idempotency_keys')})`;

/**
 * Takes the key's transaction-scoped advisory lock without waiting and, if it got it, reads the key's unexpired
 * stored answer; what it found is known once the batch has run. The lock is released by the COMMIT or ROLLBACK, or
 * by Postgres when the connection of a process that died drops: a dead request never blocks its retry.
 */
export function addTakeKey(batch: SqlBatch, em: Em, key: string): () => KeyLock {
  const customerId = tenantOf(em);
  const lock = batch.add<{
    locked: boolean;
    request_hash: string | null;
    response_status: number | null;
    response_body: unknown;
  }>(
    `select l.locked, k.request_hash, k.response_status, k.response_body
     from (select pg_try_advisory_xact_lock(?::bigint) as locked) l
     left join idempotency_keys k
       on l.locked and k.customer_id = ? and k.key = ? and ${answersFor('k')}`,
    [advisoryLockId(customerId, key), customerId, key],
  );
  return () => {
    const row = lock.rows[0];
    if (!row.locked) return { locked: false };
    if (row.request_hash === null) return { locked: true };
    return {
      locked: true,
      stored: { requestHash: row.request_hash, status: row.response_status!, body: row.response_body },
    };
  };
}

/**
 * Stores the answer in the request's transaction, so it commits with the business write or not at all. Replaces
 * an expired row of the same key (its 24 h are over: the key is new again), never a live one: the function it
 * returns tells, once the batch has run, whether the answer was stored (false: a live row was there).
 */
export function addStoreAnswer(batch: SqlBatch, em: Em, key: string, answer: StoredAnswer): () => boolean {
  const stored = batch.add(
    `insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body,
      created_at, expires_at)
     values (?, ?, ?, 'DONE', ?, ?::jsonb, now(), ${EXPIRES_AT})
     ${REPLACE_UNLESS_ANSWERING}
     returning 1 as stored`,
    [tenantOf(em), key, answer.requestHash, answer.status, JSON.stringify(answer.body ?? null)],
  );
  return () => stored.rows.length > 0;
}

/**
 * The key's stored answer, unexpired, read without its lock and outside any transaction: what a route whose `prepare`
 * calls a provider answers before that call (decision 0168). Only committed answers are seen; a request that holds
 * the key now is found, or not, by its keyed transaction.
 */
export async function findStoredAnswer(em: Em, key: string): Promise<StoredAnswer | undefined> {
  const [row] = await em.execute<Array<{ request_hash: string; response_status: number; response_body: unknown }>>(
    `select k.request_hash, k.response_status, k.response_body from idempotency_keys k
     where k.customer_id = ? and k.key = ? and ${answersFor('k')}`,
    [tenantOf(em), key],
  );
  return row && { requestHash: row.request_hash, status: row.response_status, body: row.response_body };
}

// The key's live row, or a new STARTED one (which answers nothing: the keyed transaction runs the request and stores
// its answer over it) where the key has none or an expired one. The second select sees the statement's snapshot:
// the live row found there and a row the insert wrote are never both answered.
const CREATED_AT = `with started as (
    insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body, created_at,
      expires_at)
    values (?, ?, ?, 'STARTED', null, null, now(), ${EXPIRES_AT})
    on conflict (customer_id, key) do update
      set request_hash = excluded.request_hash, state = 'STARTED', response_status = null, response_body = null,
          created_at = excluded.created_at, expires_at = excluded.expires_at
      where idempotency_keys.expires_at <= now()
    returning created_at, request_hash
  )
  select created_at, request_hash from started
  union all
  select created_at, request_hash from idempotency_keys where customer_id = ? and key = ? and expires_at > now()`;

/** The key's live row as `keyStart` found or wrote it: when it was created, and for which request. */
export interface KeyStart {
  createdAt: Date;
  /** The request the row was written for: this request's when the row is new, the first request's otherwise. */
  requestHash: string;
}

/**
 * When the key's row was created: what changes when a key is used again once its 24 h are over, and never within
 * them. A request whose handler names rows by its key (`requestScopedId`) derives their ids from it, so a retry finds
 * its first attempt's rows and a reused expired key is a new request (decision 0168). Written at once (outside any
 * transaction, before the handler runs) for a key that has no live row, so the retry of a request that died after
 * an effect finds the same instant. The row's request tells the caller whether this is that retry (decision 0194).
 */
export async function keyStart(em: Em, key: string, requestHash: string): Promise<KeyStart> {
  const customerId = tenantOf(em);
  // Empty only when another request wrote the key's row after this statement's snapshot: the next run sees it.
  for (let run = 1; ; run++) {
    const [row] = await em.execute<Array<{ created_at: Date; request_hash: string }>>(CREATED_AT, [
      customerId,
      key,
      requestHash,
      customerId,
      key,
    ]);
    if (row) return { createdAt: new Date(row.created_at), requestHash: row.request_hash };
    if (run >= 3) throw new Error(`idempotency key ${key}: no live row after ${run} runs`);
  }
}

// One purge statement deletes at most this many rows, so it never holds many row locks or a long transaction.
const PURGE_BATCH = 1000;
// A row goes an hour after its expiry, not at it: a request transaction that began while the row still answered
// (seconds at most: DB_STATEMENT_TIMEOUT_MS, DB_IDLE_IN_TRANSACTION_TIMEOUT_MS) never finds it gone.
const PURGE_AFTER_EXPIRY = `interval '1 hour'`;

const PURGE = numbered(`with gone as (
    delete from idempotency_keys
    where (customer_id, key) in (
      select customer_id, key from idempotency_keys where expires_at < now() - ${PURGE_AFTER_EXPIRY}
      order by expires_at limit ? for update skip locked)
    returning 1
  )
  select count(*)::int as n from gone`);

/**
 * Deletes the rows of expired keys (an hour past their 24 h), across customers (a system-scoped EntityManager), in
 * batches of `batch` until none is left; returns how many went. A row within its 24 h is never touched: its answer
 * is replayed, and a STARTED row's instant names its key's rows. Straight through the driver, outside any
 * transaction: each batch commits on its own, and several purges at once only find fewer rows.
 */
export async function purgeExpiredKeys(em: Em, batch = PURGE_BATCH): Promise<number> {
  let purged = 0;
  for (;;) {
    const rows = await rawQuery<{ n: number }>(em, PURGE, [batch]);
    purged += rows[0].n;
    if (rows[0].n < batch) return purged;
  }
}
