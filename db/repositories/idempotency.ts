import type { Em } from '../orm';

// docs/decisions.md: keys are kept 24 h.
export const IDEMPOTENCY_TTL_HOURS = 24;
// A request that started but never finished (its process died) frees its key after this long, so the
// client is not locked out for a day; business rules (a quote is consumed once) still stop a double effect.
export const ABANDONED_AFTER_SECONDS = 120;

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'in-progress'; sameRequest: boolean }
  | { kind: 'done'; sameRequest: boolean; status: number; body: unknown };

/** Claims (customer, key) for a request, or reports what already holds it. One statement decides a race. */
export async function claimKey(em: Em, customerId: string, key: string, requestHash: string): Promise<Claim> {
  const conn = em.getConnection();
  const inserted = await conn.execute(
    `insert into idempotency_keys (customer_id, key, request_hash, state, created_at, expires_at)
     values (?, ?, ?, 'IN_PROGRESS', now(), now() + interval '${IDEMPOTENCY_TTL_HOURS} hours')
     on conflict (customer_id, key) do update
       set request_hash = excluded.request_hash, state = 'IN_PROGRESS', response_status = null,
           response_body = null, created_at = now(), expires_at = excluded.expires_at
       where idempotency_keys.expires_at < now()
          or (idempotency_keys.state = 'IN_PROGRESS'
              and idempotency_keys.request_hash = excluded.request_hash
              and idempotency_keys.created_at < now() - interval '${ABANDONED_AFTER_SECONDS} seconds')
     returning key`,
    [customerId, key, requestHash],
  );
  if (inserted.length > 0) return { kind: 'claimed' };
  const rows = await conn.execute(
    `select request_hash, state, response_status, response_body from idempotency_keys where customer_id = ? and key = ?`,
    [customerId, key],
  );
  const row = rows[0];
  if (!row) return claimKey(em, customerId, key, requestHash); // released between the two statements
  const sameRequest = row.request_hash === requestHash;
  if (row.state === 'IN_PROGRESS') return { kind: 'in-progress', sameRequest };
  return { kind: 'done', sameRequest, status: row.response_status, body: row.response_body };
}

export async function completeKey(em: Em, customerId: string, key: string, status: number, body: unknown): Promise<void> {
  await em.getConnection().execute(
    `update idempotency_keys set state = 'DONE', response_status = ?, response_body = ?::jsonb
     where customer_id = ? and key = ?`,
    [status, JSON.stringify(body ?? null), customerId, key],
  );
}

export async function releaseKey(em: Em, customerId: string, key: string): Promise<void> {
  await em.getConnection().execute(`delete from idempotency_keys where customer_id = ? and key = ? and state = 'IN_PROGRESS'`, [customerId, key]);
}
