// Postings seeded straight into Postgres for the statement benches (INSERT ... SELECT generate_series): an account's
// history at any length in seconds, with the balance each posting carries and the balance row after the last.
import type { Client } from 'pg';

// One ledger transaction per posting, a credit of 2.00 or (every third) a debit of 1.00 on the account's available
// book, one second apart, ending a minute ago; each entry carries the running balance after it.
const SEED_SQL = `
with p as (
  select g, gen_random_uuid() as tx, case when g % 3 = 0 then -1.00 else 2.00 end as amount,
    now() - interval '1 minute' - ($2::int - g) * interval '1 second' as at
  from generate_series(1, $2::int) g
), t as (
  insert into ledger_transactions (id, key, operation_id, description, created_at)
  select tx, 'bench:' || tx, null, 'bench posting', at from p
)
insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at, balance_seq, booked_at,
  available_after, held_after)
select gen_random_uuid(), tx, $1::uuid, 'available', 'BRL', amount, at, g, at,
  sum(amount) over (order by g rows between unbounded preceding and current row), 0
from p`;

/** `count` postings on `accountId`'s BRL, one a second up to a minute ago, and its balance row after the last. */
export async function seedPostings(db: Client, accountId: string, customerId: string, count: number): Promise<void> {
  await db.query(SEED_SQL, [accountId, count]);
  await db.query(
    `insert into balances (account_id, asset, customer_id, available, held, updated_at, seq, booked_at)
     select $1, 'BRL', $2, available_after, 0, now(), balance_seq, booked_at from ledger_entries
     where account_id = $1 order by balance_seq desc limit 1
     on conflict (account_id, asset) do update set available = excluded.available, seq = excluded.seq,
       booked_at = excluded.booked_at`,
    [accountId, customerId],
  );
}
