// The entries of an account's statement, read from the balance history the postings write (ledger.ts). How it
// reaches Postgres: hand-written statements through em.execute, a keyset page at a time, so a statement of any
// length is read in constant memory. Tenant: every read names the account together with the scope's customer
// (`tenantOf`), so another customer's account reads as absent.
import { Em, tenantOf } from '../orm';
import { queryRows } from '../raw';

/** Where a statement's window stands in an account-asset's history: the last move before a bound. */
export interface HistoryPoint {
  /** The booked total (available + held) after that move; '0' when none came before. */
  total: string;
  /** The keyset position of that move, or null when none came before the bound. */
  position: EntryPosition | null;
}

/** A move's place in its account-asset's history: its booking instant (microseconds, UTC) and its seq. */
export interface EntryPosition {
  bookedAt: string;
  seq: string;
}

/**
 * One customer entry row of the history (a posting's leg on the account-asset), in booking order. A posting whose
 * legs touch both books of the account-asset has several rows with the same position: its entry is their sum.
 */
export interface StatementEntryRow {
  transactionId: string;
  bookedAt: string;
  seq: string;
  operationId: string | null;
  operationType: string | null;
  description: string;
  /** Signed, at the asset's scale: the leg's effect on the booked total. */
  amount: string;
  /** The booked total (available + held) after the posting, at the asset's scale. */
  balanceAfter: string;
  endToEnd: string | null;
}

const ISO_MICROS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

/** Whether the account belongs to the scope's customer. */
export async function ownsAccount(em: Em, accountId: string): Promise<boolean> {
  const rows = await em.execute('select 1 from accounts where id = ? and customer_id = ?', [accountId, tenantOf(em)]);
  return rows.length > 0;
}

/**
 * The account-asset's history points just before `from` and just before `to` (timestamptz literals), in one statement
 * and so one snapshot: a posting committed between two separate reads was in the later-taken point only, and a
 * statement whose opening was read after it and its closing before it opened above its close with no entry between.
 * One index lookup each; `readAt` is the database's clock at that snapshot (the clock booked_at is stamped by).
 */
export async function historyPointsAround(
  em: Em,
  accountId: string,
  asset: string,
  from: string,
  to: string,
): Promise<{ points: [HistoryPoint, HistoryPoint]; readAt: Date }> {
  const rows = (await em.execute(
    `select b.n, h.total, h.booked_at, h.seq, now() as read_at
     from (values (1, ?::timestamptz), (2, ?::timestamptz)) b (n, bound)
     left join lateral (
       select (e.available_after + e.held_after)::text as total,
         to_char(e.booked_at at time zone 'UTC', ${ISO_MICROS}) as booked_at, e.balance_seq::text as seq
       from ledger_entries e
       where e.account_id = ? and e.asset = ? and e.booked_at < b.bound
         and exists (select 1 from accounts a where a.id = e.account_id and a.customer_id = ?)
       order by e.booked_at desc, e.balance_seq desc limit 1) h on true
     order by b.n`,
    [from, to, accountId, asset, tenantOf(em)],
  )) as Array<{ n: number; total: string | null; booked_at: string | null; seq: string | null; read_at: Date }>;
  const point = (r: (typeof rows)[number]): HistoryPoint =>
    r.total !== null
      ? { total: r.total, position: { bookedAt: r.booked_at!, seq: r.seq! } }
      : { total: '0', position: null };
  return { points: [point(rows[0]), point(rows[1])], readAt: new Date(rows[0].read_at) };
}

// Not a prepared statement: its generic plan (unknown bounds and limit) reads the history in parallel workers and
// took 500 ms a page where the custom plan takes a few; straight through the driver (db/raw.ts) all the same.
const ROWS_PAGE = `
  select e.transaction_id as id, to_char(e.booked_at at time zone 'UTC', ${ISO_MICROS}) as booked_at,
    e.balance_seq::text as seq, t.operation_id, o.type as operation_type, t.description,
    trunc(e.amount, ?)::text as amount, trunc(e.available_after + e.held_after, ?)::text as balance_after,
    case when o.type in ('DEPOSIT', 'WITHDRAWAL') then o.transactions -> 0 ->> 'endToEnd' end as end_to_end
  from ledger_entries e
  join ledger_transactions t on t.id = e.transaction_id
  left join operations o on o.id = t.operation_id
  where e.account_id = ? and e.asset = ?
    and (e.booked_at, e.balance_seq) > (?::timestamptz, ?::bigint)
    and (e.booked_at, e.balance_seq) <= (?::timestamptz, ?::bigint)
    and exists (select 1 from accounts a where a.id = ? and a.customer_id = ?)
  order by e.booked_at, e.balance_seq
  limit ?`;

/**
 * The history rows strictly after `after` (null: from the start) up to and including `until`, oldest first, `limit`
 * at a time, with their transaction's description and operation. Raw legs, not grouped: summing a posting's legs
 * here (GROUP BY per page) cost a third of the page's time, and the caller nets them as they stream. Amounts come
 * at the asset's scale (`trunc(x, decimals)`: the ledger holds no finer digit, so it cuts only the column's zero
 * padding), ready to print without a decimal library per row.
 */
export async function statementRowsPage(
  em: Em,
  accountId: string,
  asset: string,
  decimals: number,
  after: EntryPosition | null,
  until: EntryPosition,
  limit: number,
): Promise<StatementEntryRow[]> {
  const from = after ?? { bookedAt: '-infinity', seq: '0' };
  const values = [decimals, decimals, accountId, asset, from.bookedAt, from.seq, until.bookedAt, until.seq];
  const rows = await queryRows<Record<string, string | null>>(em, ROWS_PAGE, [
    ...values,
    accountId,
    tenantOf(em),
    limit,
  ]);
  return rows.map((r) => ({
    transactionId: r.id!,
    bookedAt: r.booked_at!,
    seq: r.seq!,
    operationId: r.operation_id,
    operationType: r.operation_type,
    description: r.description!,
    amount: r.amount!,
    balanceAfter: r.balance_after!,
    endToEnd: r.end_to_end,
  }));
}
