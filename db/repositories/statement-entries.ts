// The entries of an account's statement, read from the balance history the postings write (ledger.ts). How it
// reaches Postgres: hand-written statements through em.execute, a keyset page at a time, so a statement of any
// length is read in constant memory. Tenant: every read names the account together with the scope's customer
// (`tenantOf`), so another customer's account reads as absent.
import { Em, tenantOf } from '../orm';

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

export interface StatementEntryRow {
  id: string;
  bookedAt: string;
  seq: string;
  operationId: string | null;
  operationType: string | null;
  description: string;
  /** Signed: the posting's net effect on the booked total. */
  amount: string;
  balanceAfter: string;
  endToEnd: string | null;
}

const ISO_MICROS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

/** Whether the account belongs to the scope's customer. */
export async function ownsAccount(em: Em, accountId: string): Promise<boolean> {
  const rows = await em.execute('select 1 from accounts where id = ? and customer_id = ?', [accountId, tenantOf(em)]);
  return rows.length > 0;
}

/** The account-asset's history point just before `before` (a timestamptz literal): one index lookup. */
export async function historyPointBefore(
  em: Em,
  accountId: string,
  asset: string,
  before: string,
): Promise<HistoryPoint> {
  const rows = (await em.execute(
    `select (e.available_after + e.held_after)::text as total,
       to_char(e.booked_at at time zone 'UTC', ${ISO_MICROS}) as booked_at, e.balance_seq::text as seq
     from ledger_entries e
     where e.account_id = ? and e.asset = ? and e.booked_at < ?::timestamptz
       and exists (select 1 from accounts a where a.id = e.account_id and a.customer_id = ?)
     order by e.booked_at desc, e.balance_seq desc limit 1`,
    [accountId, asset, before, tenantOf(em)],
  )) as Array<{ total: string; booked_at: string; seq: string }>;
  const row = rows[0];
  return row
    ? { total: row.total, position: { bookedAt: row.booked_at, seq: row.seq } }
    : { total: '0', position: null };
}

/**
 * The entries strictly after `after` (null: from the start) up to and including `until`, oldest first, `limit` at a
 * time. One entry per posting that changed the booked total: a hold or its release moves money between the
 * account's own books and is no entry.
 */
export async function statementEntriesPage(
  em: Em,
  accountId: string,
  asset: string,
  after: EntryPosition | null,
  until: EntryPosition,
  limit: number,
): Promise<StatementEntryRow[]> {
  const from = after ?? { bookedAt: '-infinity', seq: '0' };
  const rows = (await em.execute(
    `select g.transaction_id as id, to_char(g.booked_at at time zone 'UTC', ${ISO_MICROS}) as booked_at,
       g.seq::text as seq, t.operation_id, o.type as operation_type, t.description, g.amount::text as amount,
       g.after::text as balance_after,
       case when o.type in ('DEPOSIT', 'WITHDRAWAL') then o.transactions -> 0 ->> 'endToEnd' end as end_to_end
     from (
       select e.booked_at, e.balance_seq as seq, min(e.transaction_id::text)::uuid as transaction_id,
         sum(e.amount) as amount, max(e.available_after + e.held_after) as after
       from ledger_entries e
       where e.account_id = ? and e.asset = ?
         and (e.booked_at, e.balance_seq) > (?::timestamptz, ?::bigint)
         and (e.booked_at, e.balance_seq) <= (?::timestamptz, ?::bigint)
         and exists (select 1 from accounts a where a.id = ? and a.customer_id = ?)
       group by e.booked_at, e.balance_seq
       having sum(e.amount) <> 0
       order by e.booked_at, e.balance_seq
       limit ?
     ) g
     join ledger_transactions t on t.id = g.transaction_id
     left join operations o on o.id = t.operation_id
     order by g.booked_at, g.seq`,
    [accountId, asset, from.bookedAt, from.seq, until.bookedAt, until.seq, accountId, tenantOf(em), limit],
  )) as Array<Record<string, string | null>>;
  return rows.map((r) => ({
    id: r.id!,
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
