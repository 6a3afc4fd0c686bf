import { createHash } from 'node:crypto';
import type { Em } from '../orm';

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
 * got it, reads the key's unexpired stored response. One round trip. The lock is released by the COMMIT or
 * ROLLBACK, or by Postgres when the connection of a process that died drops: a dead request never blocks
 * its retry.
 */
export async function lockKey(em: Em, customerId: string, key: string): Promise<KeyLock> {
  const rows = (await em.execute(
    `select l.locked, k.request_hash, k.response_status, k.response_body
     from (select pg_try_advisory_xact_lock(?::bigint) as locked) l
     left join idempotency_keys k
       on l.locked and k.customer_id = ? and k.key = ? and k.state = 'DONE' and k.expires_at > now()`,
    [advisoryLockId(customerId, key), customerId, key],
  )) as Array<{ locked: boolean; request_hash: string | null; response_status: number | null; response_body: unknown }>;
  const row = rows[0];
  if (!row.locked) return { locked: false };
  if (row.request_hash === null) return { locked: true };
  return { locked: true, stored: { requestHash: row.request_hash, status: row.response_status!, body: row.response_body } };
}

/**
 * Stores the response in the request's transaction, so it commits with the business write or not at all.
 * Replaces an expired row of the same key (its 24 h are over: the key is new again).
 */
export async function storeResponse(em: Em, customerId: string, key: string, response: StoredResponse): Promise<void> {
  await em.execute(
    `insert into idempotency_keys (customer_id, key, request_hash, state, response_status, response_body, created_at, expires_at)
     values (?, ?, ?, 'DONE', ?, ?::jsonb, now(), now() + interval '${IDEMPOTENCY_TTL_HOURS} hours')
     on conflict (customer_id, key) do update
       set request_hash = excluded.request_hash, state = 'DONE', response_status = excluded.response_status,
           response_body = excluded.response_body, created_at = excluded.created_at, expires_at = excluded.expires_at`,
    [customerId, key, response.requestHash, response.status, JSON.stringify(response.body ?? null)],
  );
}
