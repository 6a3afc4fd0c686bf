// The operators' audit log (table `audit_log`): plain SQL through the caller's EntityManager. It belongs to no
// customer (operators act across customers), so no tenant applies; only the operator CLI reaches it.
import { createHash, randomUUID } from 'node:crypto';
import type { Em } from '../orm';
import { inTransaction } from '../transaction';

export interface AuditEntry {
  id: string;
  at: string;
  operator: string;
  action: string;
  target: string;
  reason: string | null;
  details: Record<string, unknown>;
}

export interface AuditRow extends AuditEntry {
  seq: string;
  prevHash: string;
  hash: string;
}

// One lock id for every writer of the chain: two CLI processes appending at once queue instead of both
// chaining onto the same last row (a fork).
const CHAIN_LOCK = '7243598213371170817';

/** Key order must not change the hash (jsonb does not keep it). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entry = (k: string) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`;
    return `{${Object.keys(value as object)
      .sort()
      .map(entry)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** sha256 over the previous row's hash and this row's fields. */
export function auditHash(prevHash: string, e: AuditEntry): string {
  const { id, at, operator, action, target, reason, details } = e;
  const body = canonical({ id, at, operator, action, target, reason, details });
  return createHash('sha256').update(`${prevHash}\n${body}`).digest('hex');
}

/** Appends one row to the chain, in its own transaction holding the chain's lock. */
export async function appendAudit(em: Em, entry: Omit<AuditEntry, 'id' | 'at'>): Promise<AuditRow> {
  return inTransaction(em, async (tx) => {
    await tx.execute(`select pg_advisory_xact_lock(${CHAIN_LOCK}::bigint)`);
    const [last] = await tx.execute(`select hash from audit_log order by seq desc limit 1`);
    const prevHash: string = last?.hash ?? '';
    const full: AuditEntry = { ...entry, id: randomUUID(), at: new Date().toISOString() };
    const hash = auditHash(prevHash, full);
    const [row] = await tx.execute(
      `insert into audit_log (id, at, operator, action, target, reason, details, prev_hash, hash)
       values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?) returning seq::text`,
      [
        full.id,
        full.at,
        full.operator,
        full.action,
        full.target,
        full.reason,
        JSON.stringify(full.details),
        prevHash,
        hash,
      ],
    );
    return { ...full, seq: row.seq, prevHash, hash };
  });
}

const toRow = (r: Record<string, unknown>): AuditRow => ({
  seq: String(r.seq),
  id: r.id as string,
  at: r.at as string,
  operator: r.operator as string,
  action: r.action as string,
  target: r.target as string,
  reason: (r.reason as string | null) ?? null,
  details: r.details as Record<string, unknown>,
  prevHash: r.prev_hash as string,
  hash: r.hash as string,
});

/** Rows in chain order, optionally from `since` and of one action. */
export async function listAudit(em: Em, filter: { since?: Date; action?: string } = {}): Promise<AuditRow[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.since) {
    where.push('at >= ?');
    params.push(filter.since);
  }
  if (filter.action) {
    where.push('action = ?');
    params.push(filter.action);
  }
  // `at` as the ISO text that was hashed; ordered by the column, not by the text alias of the same name.
  const rows = await em.execute(
    `select seq::text, id, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, operator, action,
       target, reason, details, prev_hash, hash
     from audit_log ${where.length ? `where ${where.join(' and ')}` : ''} order by audit_log.seq`,
    params,
  );
  return rows.map(toRow);
}

/** The first row whose chain link or own hash does not hold, with why; null when the whole chain holds. */
export function firstBrokenLink(rows: AuditRow[]): { row: AuditRow; problem: string } | null {
  let prev = '';
  for (const row of rows) {
    if (row.prevHash !== prev) {
      return { row, problem: 'its link to the previous row does not match (a row before it was removed or edited)' };
    }
    if (auditHash(prev, row) !== row.hash) {
      return { row, problem: 'its content does not match its hash (the row was edited)' };
    }
    prev = row.hash;
  }
  return null;
}
