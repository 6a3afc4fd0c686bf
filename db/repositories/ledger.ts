// The ledger: transactions, entries and running balances. How it reaches Postgres: hand-written statements, as
// statements of the caller's batch (db/batch.ts) for a posting, em.execute for a balance read. Tenant: a posting's
// rows carry the customer of the operation or payment it books (read in the caller's scope, or by a worker acting
// system-wide); `balancesOf` takes the customer from the EntityManager's scope (`tenantOf`).
import { randomUUID } from 'node:crypto';
import { Em, tenantOf } from '../orm';
import { SqlBatch } from '../batch';
import { CambioError } from '../../domain/errors';
import { Dec } from '../../domain/money';
import { suspenseAccountId, type Posting } from '../../domain/postings';

export interface LedgerWrite {
  /** Unique per effect, e.g. `${operationId}:settle`: a retry finds the first posting and does nothing. */
  key: string;
  operationId: string | null;
  /** The owner of the balance rows it moves; null only for a posting of the platform's suspense alone. */
  customerId: string | null;
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
 * Posts a balanced transaction and moves the running balances, as statements of the caller's batch (one round
 * trip with the caller's other writes, in the caller's database transaction). The function it returns tells, once
 * the batch has run, whether this call posted (false: the key was posted before). Every statement after the
 * transaction's insert writes only if that insert did (`where exists` on its fresh id), so a retried step whose key
 * is already there changes nothing. A balance that would go negative violates the table's CHECK and surfaces as
 * INSUFFICIENT_FUNDS, rolling back the caller.
 */
export function addPosting(batch: SqlBatch, write: LedgerWrite): () => boolean {
  assertBalanced(write.postings);
  const txId = randomUUID();
  const inserted = batch.add(
    `insert into ledger_transactions (id, key, operation_id, description, created_at) values (?, ?, ?, ?, now())
     on conflict (key) do nothing returning id`,
    [txId, write.key, write.operationId, write.description],
  );
  const ifPosted = `exists (select 1 from ledger_transactions where id = '${txId}')`;
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
  // queue behind each other instead of each holding the row the other waits for (transfers A→B and B→A). The
  // statements of a batch run in the order added, so this order is the order the rows are locked in.
  const sorted = [...moves.values()].sort(byBalanceRow);
  for (const m of sorted) {
    // The platform's suspense belongs to no customer, whoever's posting moves it.
    const owner = m.accountId === PLATFORM_SUSPENSE ? null : write.customerId;
    addBalanceMove(batch, ifPosted, owner, m, (err) => insufficientFunds(err, sorted));
  }
  if (sorted.length > 1) addOneInstant(batch, ifPosted, sorted);
  // After the moves: each customer entry copies its balance row as the move left it (seq, booking instant, available
  // and held after), the history a past balance is read from. The row is locked by the update above, so no other
  // posting moves it in between.
  batch.add(
    `insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at, balance_seq,
       booked_at, available_after, held_after)
     select v.id::uuid, v.transaction_id::uuid, v.account_id::uuid, v.book, v.asset, v.amount::numeric, now(), b.seq,
       b.booked_at, b.available, b.held
     from (values ${write.postings.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}) v (id, transaction_id, account_id,
       book, asset, amount)
     left join balances b on b.account_id = v.account_id::uuid and b.asset = v.asset
     where ${ifPosted}`,
    write.postings.flatMap((p) => [randomUUID(), txId, p.accountId, p.book, p.asset, p.amount.toFixed()]),
  );
  return () => inserted.rows.length > 0;
}

const PLATFORM_SUSPENSE = suspenseAccountId(null);

/** The global lock order of balance rows. Plain code-point comparison: the same in every process and locale. */
export function byBalanceRow(a: { accountId: string; asset: string }, b: { accountId: string; asset: string }): number {
  if (a.accountId !== b.accountId) return a.accountId < b.accountId ? -1 : 1;
  return a.asset < b.asset ? -1 : a.asset > b.asset ? 1 : 0;
}

/**
 * Adds the deltas to a running balance, in place. The first movement of an asset on an account finds no row: a
 * zero row is inserted first (a no-op when the row exists), then updated, because Postgres checks CHECK
 * constraints on an INSERT's proposed row even when ON CONFLICT turns it into an update. The insert waits on the
 * row only where the update right after it would, so the lock order stays the one above.
 */
function addBalanceMove(
  batch: SqlBatch,
  ifPosted: string,
  customerId: string | null,
  m: { accountId: string; asset: string; available: Dec; held: Dec },
  onCheck: (err: unknown) => unknown,
) {
  batch.add(
    `insert into balances (account_id, asset, customer_id, available, held, updated_at)
     select ?, ?, ?, 0, 0, now() where ${ifPosted} on conflict (account_id, asset) do nothing`,
    [m.accountId, m.asset, customerId],
  );
  batch.add(
    // seq counts the row's moves; booked_at is the instant of this one, read under the row's lock and never before
    // the previous move's, so the order of seq and the order of booked_at are the same.
    `update balances set available = available + ?, held = held + ?, updated_at = now(), seq = seq + 1,
       booked_at = greatest(clock_timestamp(), booked_at)
     where account_id = ? and asset = ? and ${ifPosted}`,
    [m.available.toFixed(), m.held.toFixed(), m.accountId, m.asset],
    onCheck,
  );
}

/**
 * Each move stamped its row with the clock as it took it, microseconds apart: a read at an instant between them saw
 * the posting half done (a swap's source gone, its target not yet there). All of the posting's rows take the latest
 * of those instants, so it books at one instant. They are locked by the moves, and the latest is no earlier than
 * any row's own, so each row's instants still only grow.
 */
function addOneInstant(batch: SqlBatch, ifPosted: string, rows: Array<{ accountId: string; asset: string }>) {
  const keys = rows.map(() => '(?::uuid, ?)').join(', ');
  const params = rows.flatMap((r) => [r.accountId, r.asset]);
  batch.add(
    `update balances set booked_at = (select max(booked_at) from balances where (account_id, asset) in (${keys}))
     where (account_id, asset) in (${keys}) and ${ifPosted}`,
    [...params, ...params],
  );
}

/**
 * A balance's non-negative CHECK (and only that: other tables' checks stay errors) as INSUFFICIENT_FUNDS, for the
 * asset of the row whose deltas take money out of the violated book (a posting has one such row per book).
 */
function insufficientFunds(
  err: unknown,
  moves: Array<{ asset: string; available: Dec; held: Dec }>,
): CambioError | undefined {
  const e = err as { code?: string; table?: string; constraint?: string };
  if (e.code !== '23514' || e.table !== 'balances') return undefined;
  const book = e.constraint === 'balances_held_non_negative' ? 'held' : 'available';
  const asset = (moves.find((m) => m[book].isNegative()) ?? moves[0]).asset;
  return new CambioError('INSUFFICIENT_FUNDS', `insufficient available ${asset} balance`, { asset });
}

export interface BalanceRow {
  asset: string;
  available: Dec;
  held: Dec;
}

/** The running balances of an account of the scope's customer. */
export async function balancesOf(em: Em, accountId: string): Promise<BalanceRow[]> {
  const rows = await em.execute(
    'select asset, available::text, held::text from balances where account_id = ? and customer_id = ?',
    [accountId, tenantOf(em)],
  );
  return (rows as Array<{ asset: string; available: string; held: string }>).map((r) => ({
    asset: r.asset,
    available: new Dec(r.available),
    held: new Dec(r.held),
  }));
}

/**
 * The balances of an account of the scope's customer as they stood just before `asOf` (a timestamptz literal): per
 * asset the last customer entry booked before it, one lookup on the history index per asset. An asset whose first
 * posting came later stood at zero.
 */
export async function balancesAsOf(em: Em, accountId: string, asOf: string): Promise<BalanceRow[]> {
  const rows = await em.execute(
    `select b.asset, coalesce(h.available_after, 0)::text as available, coalesce(h.held_after, 0)::text as held
     from balances b
     left join lateral (
       select e.available_after, e.held_after from ledger_entries e
       where e.account_id = b.account_id and e.asset = b.asset and e.account_id is not null
         and e.booked_at < ?::timestamptz
       order by e.booked_at desc, e.balance_seq desc limit 1) h on true
     where b.account_id = ? and b.customer_id = ?`,
    [asOf, accountId, tenantOf(em)],
  );
  return (rows as Array<{ asset: string; available: string; held: string }>).map((r) => ({
    asset: r.asset,
    available: new Dec(r.available),
    held: new Dec(r.held),
  }));
}
