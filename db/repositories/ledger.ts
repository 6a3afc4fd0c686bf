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
  for (const p of write.postings) {
    await em.execute(
      `insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at) values (?, ?, ?, ?, ?, ?, now())`,
      [randomUUID(), txId, p.accountId, p.book, p.asset, p.amount.toFixed()],
    );
  }
  for (const p of write.postings) {
    if (!p.accountId) continue;
    if (p.book !== 'available' && p.book !== 'held') throw new Error(`unknown customer book ${p.book}`);
    const available = p.book === 'available' ? p.amount.toFixed() : '0';
    const held = p.book === 'held' ? p.amount.toFixed() : '0';
    // A zero row first, then the delta: Postgres checks CHECK constraints on an INSERT's proposed row even
    // when ON CONFLICT turns it into an update, so a negative delta cannot ride on the insert.
    await em.execute(
      `insert into balances (account_id, asset, customer_id, available, held, updated_at) values (?, ?, ?, 0, 0, now())
       on conflict (account_id, asset) do nothing`,
      [p.accountId, p.asset, write.customerId],
    );
    try {
      await em.execute(
        `update balances set available = available + ?, held = held + ?, updated_at = now() where account_id = ? and asset = ?`,
        [available, held, p.accountId, p.asset],
      );
    } catch (err) {
      if ((err as { code?: string }).code === '23514') {
        throw new CambioError('INSUFFICIENT_FUNDS', `insufficient available ${p.asset} balance`, { asset: p.asset });
      }
      throw err;
    }
  }
  return true;
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
