// Idempotency keys: the stored answer of each (customer, key) and the advisory lock that marks a key as taken by
// a live request. How it reaches Postgres: hand-written statements of the caller's batch (db/batch.ts), in the
// request's transaction (db/keyed-transaction.ts); the quote's one statement (db/repositories/keyed-quote.ts) uses
// the same conditions. Tenant: the customer comes from the EntityManager's scope (`tenantOf`).
import { createHash } from 'node:crypto';
import { Em, tenantOf } from '../orm';
import type { SqlBatch } from '../batch';

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
 * The conflict clause of every insert of a stored answer: a row that no longer answers for its key (expired) is
 * replaced; a row that still answers is kept, and the insert returns no row.
 */
export const REPLACE_UNLESS_ANSWERING = `on conflict (customer_id, key) do update
  set request_hash = excluded.request_hash, state = 'DONE', response_status = excluded.response_status,
      response_body = excluded.response_body, created_at = excluded.created_at, expires_at = excluded.expires_at
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
