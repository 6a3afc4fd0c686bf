import { randomUUID } from 'node:crypto';
import type { Em } from '../orm';
import { CambioError } from '../../domain/errors';
import { Dec } from '../../domain/money';

/** Books that hold a customer's money on an account; everything else is a system book (account null). */
export type CustomerBook = 'available' | 'held';

export interface Posting {
  accountId: string | null;
  book: CustomerBook | string;
  asset: string;
  /** Signed: positive increases the book. */
  amount: Dec;
}

export interface LedgerWrite {
  /** Unique per effect, e.g. `${operationId}:settle`: a retry finds the first posting and does nothing. */
  key: string;
  operationId: string | null;
  customerId: string;
  description: string;
  postings: Posting[];
}

/** Entries must balance per asset: the money moved always comes from somewhere. */
export function assertBalanced(postings: Posting[]): void {
  const sums = new Map<string, Dec>();
  for (const p of postings) sums.set(p.asset, (sums.get(p.asset) ?? new Dec(0)).plus(p.amount));
  for (const [asset, sum] of sums) {
    if (!sum.isZero()) throw new Error(`unbalanced ledger transaction: ${asset} sums to ${sum.toFixed()}`);
  }
}

/**
 * Posts a balanced transaction and moves the running balances, in the caller's database transaction.
 * Returns false when the key was already posted (nothing is written again). A balance that would go
 * negative violates the table's CHECK and surfaces as INSUFFICIENT_FUNDS, rolling back the caller.
 */
export async function post(em: Em, write: LedgerWrite): Promise<boolean> {
  assertBalanced(write.postings);
  const txId = randomUUID();
  const inserted = await em.execute(
    `insert into ledger_transactions (id, key, operation_id, description, created_at) values (?, ?, ?, ?, now())
     on conflict (key) do nothing returning id`,
    [txId, write.key, write.operationId, write.description],
  );
  if (inserted.length === 0) return false;
  await em.execute(
    `insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at) values ${write.postings.map(() => '(?, ?, ?, ?, ?, ?, now())').join(', ')}`,
    write.postings.flatMap((p) => [randomUUID(), txId, p.accountId, p.book, p.asset, p.amount.toFixed()]),
  );
  // One update per (account, asset): a hold moves available and held of the same row together.
  const moves = new Map<string, { accountId: string; asset: string; available: Dec; held: Dec }>();
  for (const p of write.postings) {
    if (!p.accountId) continue;
    if (p.book !== 'available' && p.book !== 'held') throw new Error(`unknown customer book ${p.book}`);
    const key = `${p.accountId}:${p.asset}`;
    const move = moves.get(key) ?? { accountId: p.accountId, asset: p.asset, available: new Dec(0), held: new Dec(0) };
    move[p.book] = move[p.book].plus(p.amount);
    moves.set(key, move);
  }
  // Every transaction takes balance rows in one global order, (account id, asset): two that touch the same rows
  // queue behind each other instead of each holding the row the other waits for (transfers A→B and B→A).
  for (const m of [...moves.values()].sort(byBalanceRow)) {
    await moveBalance(em, write.customerId, m.accountId, m.asset, m.available.toFixed(), m.held.toFixed());
  }
  return true;
}

/** The global lock order of balance rows. Plain code-point comparison: the same in every process and locale. */
export function byBalanceRow(a: { accountId: string; asset: string }, b: { accountId: string; asset: string }): number {
  if (a.accountId !== b.accountId) return a.accountId < b.accountId ? -1 : 1;
  return a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0;
}

/**
 * Adds the deltas to a running balance. The row is updated in place; only the first movement of an asset on an
 * account inserts it (a zero row, then the update), because Postgres checks CHECK constraints on an INSERT's
 * proposed row even when ON CONFLICT turns it into an update.
 */
async function moveBalance(em: Em, customerId: string, accountId: string, asset: string, available: string, held: string): Promise<void> {
  const update = () =>
    em.execute(`update balances set available = available + ?, held = held + ?, updated_at = now() where account_id = ? and asset = ? returning 1`, [available, held, accountId, asset]);
  try {
    if ((await update()).length > 0) return;
    await em.execute(
      `insert into balances (account_id, asset, customer_id, available, held, updated_at) values (?, ?, ?, 0, 0, now()) on conflict (account_id, asset) do nothing`,
      [accountId, asset, customerId],
    );
    await update();
  } catch (err) {
    if ((err as { code?: string }).code === '23514') {
      throw new CambioError('INSUFFICIENT_FUNDS', `insufficient available ${asset} balance`, { asset });
    }
    throw err;
  }
}

export interface BalanceRow {
  asset: string;
  available: Dec;
  held: Dec;
}

export async function balancesOf(em: Em, accountId: string): Promise<BalanceRow[]> {
  const rows = await em.execute(`select asset, available::text, held::text from balances where account_id = ?`, [accountId]);
  return (rows as Array<{ asset: string; available: string; held: string }>).map((r) => ({ asset: r.asset, available: new Dec(r.available), held: new Dec(r.held) }));
}
