import { createHash } from 'node:crypto';
import type { Em } from '../orm';
import { SqlBatch, Statement } from '../batch';
import { openSavepoint, rollbackToSavepoint } from '../transaction';

// docs/decisions.md: keys are kept 24 h.
export const IDEMPOTENCY_TTL_HOURS = 24;

export interface StoredResponse {
  requestHash: string;
  status: number;
  body: unknown;
}

export type KeyLock = { locked: false } | { locked: true; stored?: StoredResponse };

/**
 * A signed 64-bit number for (customer, key): the id of the advisory lock that marks the key as taken by a
 * live request. A collision of two keys would only make one of them wait for the other (a 409), never mix
 * their results: the row is looked up by the key itself.
 */
export function advisoryLockId(customerId: string, key: string): string {
  return createHash('sha256').update(`idempotency:${customerId}:${key}`).digest().readBigInt64BE(0).toString();
}

/**
 * In the request's transaction: takes the key's transaction-scoped advisory lock without waiting and, if it
 * got it, reads the key's unexpired stored response. One round trip, which also opens `thenSavepoint` when
 * given (db/transaction.ts, `inOpenSavepoint`). The lock is released by the COMMIT or ROLLBACK, or by Postgres
 * when the connection of a process that died drops: a dead request never blocks its retry.
 */
export async function lockKey(em: Em, customerId: string, key: string, opts: { thenSavepoint?: string } = {}): Promise<KeyLock> {
  const batch = new SqlBatch();
  const lock = batch.add<{ locked: boolean; request_hash: string | null; response_status: number | null; response_body: unknown }>(
    `select l.locked, k.request_hash, k.response_status, k.response_body
     from (select pg_try_advisory_xact_lock(?::bigint) as locked) l
     left join idempotency_keys k
       on l.locked and k.customer_id = ? and k.key = ? and ${answersFor('k')}`,
    [advisoryLockId(customerId, key), customerId, key],
  );
  if (opts.thenSavepoint) batch.add(openSavepoint(opts.thenSavepoint));
  await batch.run(em);
  const row = lock.rows[0];
  if (!row.locked) return { locked: false };
  if (row.request_hash === null) return { locked: true };
  return { locked: true, stored: { requestHash: row.request_hash, status: row.response_status!, body: row.response_body } };
}

/**
 * Stores the response in the request's transaction, so it commits with the business write or not at all.
 * Replaces an expired row of the same key (its 24 h are over: the key is new again), never a live one.
 *
 * A live row can be there although `lockKey` found none: its request committed and let go of the lock between
 * the moment `lockKey`'s statement took its snapshot and the moment it took the lock. This request then ran its
 * handler a second time, and must not commit it: it fails as a serialization conflict, so `inTransaction` runs
 * the whole request again, and the new run finds the stored response and replays it.
 */
export async function storeResponse(em: Em, customerId: string, key: string, response: StoredResponse, opts: { afterRollbackTo?: string } = {}): Promise<void> {
  const batch = new SqlBatch();
  // A failed handler's savepoint is rolled back in the same round trip (its statement may have aborted the transaction).
  if (opts.afterRollbackTo) batch.add(rollbackToSavepoint(opts.afterRollbackTo));
  const stored = addStoreResponse(batch, customerId, key, response);
  await batch.run(em);
  requireStored(stored);
}

/** `storeResponse` as a statement of the caller's batch; `requireStored` checks it once the batch has run. */
export function addStoreResponse(batch: SqlBatch, customerId: string, key: string, response: StoredResponse): Statement {
  return batch.add(
    `insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body, created_at, expires_at)
     values (?, ?, ?, 'DONE', ?, ?::jsonb, now(), ${EXPIRES_AT})
     ${REPLACE_UNLESS_ANSWERING}
     returning 1 as stored`,
    [customerId, key, response.requestHash, response.status, JSON.stringify(response.body ?? null)],
  );
}

/** No row back: the key's live row was there first (`storeResponse`), so the request runs again and replays it. */
export function requireStored(stored: Statement): void {
  if (stored.rows.length === 0) throw new KeyCommittedMeanwhile();
}

/** Whether the key's row (alias `t`) still answers for the key: a stored response, not yet expired. */
export const answersFor = (t: string): string => `${t}.state = 'DONE' and ${t}.expires_at > now()`;

/** A new row's expiry. */
export const EXPIRES_AT = `now() + interval '${IDEMPOTENCY_TTL_HOURS} hours'`;

/**
 * The conflict clause of every insert of a stored response: a row that no longer answers for its key (expired) is
 * replaced; a row that still answers is kept, and the insert returns no row.
 */
export const REPLACE_UNLESS_ANSWERING = `on conflict (customer_id, key) do update
  set request_hash = excluded.request_hash, state = 'DONE', response_status = excluded.response_status,
      response_body = excluded.response_body, created_at = excluded.created_at, expires_at = excluded.expires_at
  where not (${answersFor('idempotency_keys')})`;

/** See `storeResponse`: carries the serialization-failure code, so the request's transaction is run again. */
export class KeyCommittedMeanwhile extends Error {
  readonly code = '40001';
  constructor() {
    super('the idempotency key was committed by another request after this one checked it');
  }
}
