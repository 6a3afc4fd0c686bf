// The operators' audit log (table `audit_log`): plain SQL through the caller's EntityManager (or, for the row an
// action commits with, through the statement runner of that action's transaction). It belongs to no
// customer (operators act across customers), so no tenant applies; only the operator CLI reaches it.
import { createHash, createHmac, randomUUID } from 'node:crypto';
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
  /** The fingerprint of the key that made `hash`; null for a row from before the chain was keyed. */
  keyId: string | null;
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

/** The chain's key as verify and append use it: the secret, and its fingerprint stored on each row. */
export interface AuditKey {
  secret: string;
  id: string;
}

/** A key's id: 16 hex of an HMAC of a fixed label, so rows name their key without revealing it. */
export const auditKeyOf = (secret: string): AuditKey => ({
  secret,
  id: createHmac('sha256', secret).update('cambio audit key id').digest('hex').slice(0, 16),
});

/**
 * HMAC-SHA256 with the key over the previous row's hash and this row's fields; plain SHA-256 for the rows written
 * before the chain was keyed (`key` null), which only `verify` still computes.
 */
export function auditHash(prevHash: string, e: AuditEntry, key: AuditKey | null): string {
  const { id, at, operator, action, target, reason, details } = e;
  const body = `${prevHash}\n${canonical({ id, at, operator, action, target, reason, details })}`;
  return (key ? createHmac('sha256', key.secret) : createHash('sha256')).update(body).digest('hex');
}

/** Runs one statement in the caller's transaction (em.execute, or a connection bound to a transaction). */
export type RunInTransaction = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * Appends one row to the chain through `run`, which must be inside the transaction that does the action itself:
 * the row commits with it or not at all. Takes the chain's lock until that transaction ends.
 */
export async function appendAuditWith(
  run: RunInTransaction,
  entry: Omit<AuditEntry, 'id' | 'at'>,
  key: AuditKey,
): Promise<AuditRow> {
  await run(`select pg_advisory_xact_lock(${CHAIN_LOCK}::bigint)`);
  const [last] = await run(`select hash from audit_log order by seq desc limit 1`);
  const prevHash = (last?.hash as string | undefined) ?? '';
  // The details as jsonb will hold them, so that the hash is of what verify reads back: a key whose value is
  // undefined (`returnEndToEndId` of a return still under way) is no key at all once stored.
  const details = JSON.parse(JSON.stringify(entry.details ?? {})) as AuditEntry['details'];
  const full: AuditEntry = { ...entry, details, id: randomUUID(), at: new Date().toISOString() };
  const hash = auditHash(prevHash, full, key);
  const [row] = await run(
    `insert into audit_log (id, at, operator, action, target, reason, details, prev_hash, hash, key_id)
     values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?) returning seq::text`,
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
      key.id,
    ],
  );
  return { ...full, seq: String(row.seq), prevHash, hash, keyId: key.id };
}

/** Appends one row in a transaction of its own (an action that was refused: nothing else to commit with). */
export async function appendAudit(em: Em, entry: Omit<AuditEntry, 'id' | 'at'>, key: AuditKey): Promise<AuditRow> {
  return inTransaction(em, (tx) => appendAuditWith((sql, params) => tx.execute(sql, params ?? []), entry, key));
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
  keyId: (r.key_id as string | null) ?? null,
});

const SELECT_ROWS = `select seq::text, id, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at,
    operator, action, target, reason, details, prev_hash, hash, key_id from audit_log`;

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
    `${SELECT_ROWS} ${where.length ? `where ${where.join(' and ')}` : ''} order by audit_log.seq`,
    params,
  );
  return rows.map(toRow);
}

/** The page of rows after `afterSeq`, in chain order: verify walks the chain in pages, in constant memory. */
export async function auditPage(em: Em, afterSeq: string, limit: number): Promise<AuditRow[]> {
  const rows = await em.execute(`${SELECT_ROWS} where seq > ?::bigint order by audit_log.seq limit ?`, [
    afterSeq,
    limit,
  ]);
  return rows.map(toRow);
}

/** The last row written before the chain was keyed (0: none); every row after it must carry a key id. */
export async function unkeyedUntil(em: Em): Promise<string> {
  const [row] = await em.execute('select unkeyed_until::text as seq from audit_chain_start');
  return (row?.seq as string | undefined) ?? '0';
}

/** What `verify` found: the row count and head hash, or the first row that does not hold and why. */
export interface ChainCheck {
  rows: number;
  head: string;
  broken?: { row: AuditRow; problem: string };
  /** Whether a row with hash `expectHead` was seen (a head noted earlier must still be in the chain). */
  sawExpected: boolean;
}

/**
 * Walks the whole chain in pages of `pageSize` (constant memory whatever its length) and checks each link: its
 * `prev_hash` is the previous row's hash, and its hash is the keyed HMAC of its fields (rows from before the chain
 * was keyed: SHA-256, and only up to `unkeyedUntil`). Stops at the first row that does not hold.
 */
export async function checkChain(
  em: Em,
  key: AuditKey,
  opts: { expectHead?: string; pageSize?: number } = {},
): Promise<ChainCheck> {
  const legacyUntil = BigInt(await unkeyedUntil(em));
  const result: ChainCheck = { rows: 0, head: '', sawExpected: false };
  let after = '0';
  for (;;) {
    const page = await auditPage(em, after, opts.pageSize ?? 1000);
    for (const row of page) {
      const problem = linkProblem(row, result.head, key, legacyUntil);
      if (problem) return { ...result, broken: { row, problem } };
      result.rows++;
      result.head = row.hash;
      if (row.hash === opts.expectHead) result.sawExpected = true;
    }
    if (!page.length) return result;
    after = page[page.length - 1].seq;
  }
}

function linkProblem(row: AuditRow, prev: string, key: AuditKey, legacyUntil: bigint): string | null {
  if (row.prevHash !== prev)
    return 'its link to the previous row does not match (a row before it was removed or edited)';
  if (row.keyId === null) {
    if (BigInt(row.seq) > legacyUntil) return 'it claims to be from before the chain was keyed (the row was rewritten)';
    return auditHash(prev, row, null) === row.hash ? null : 'its content does not match its hash (the row was edited)';
  }
  if (row.keyId !== key.id) return `it was keyed with another key (key id ${row.keyId}, AUDIT_KEY is ${key.id})`;
  return auditHash(prev, row, key) === row.hash
    ? null
    : 'its content does not match its keyed hash (the row was edited)';
}
