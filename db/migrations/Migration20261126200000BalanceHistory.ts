import { Migration } from '@mikro-orm/migrations';

/**
 * The balance after each posting, on the posting's rows (decision 0073): a balance row counts its moves (`seq`) and
 * stamps each with a booking instant that never goes back (`booked_at`); every customer entry of a posting copies the
 * row's seq, instant, available and held after the move. A past balance is then the last entry before the instant, one
 * lookup on `ledger_entries_balance_history`.
 *
 * The backfill orders the existing postings of each (account, asset) by their creation instant, then transaction
 * id (the only order they have), and computes the same columns with running sums.
 */
export class Migration20261126200000BalanceHistory extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "balances" add column "seq" bigint not null default 0,
      add column "booked_at" timestamptz null;`);
    this.addSql(`alter table "ledger_entries" add column "balance_seq" bigint null,
      add column "booked_at" timestamptz null, add column "available_after" numeric(38,6) null,
      add column "held_after" numeric(38,6) null;`);
    this.addSql(BACKFILL_BALANCE_HISTORY_SQL);
    this.addSql(`update "balances" b set "seq" = h.seq, "booked_at" = h.booked_at
      from (select account_id, asset, max(balance_seq) as seq, max(booked_at) as booked_at from ledger_entries
            where account_id is not null group by account_id, asset) h
      where h.account_id = b.account_id and h.asset = b.asset;`);
    this.addSql(`create index "ledger_entries_balance_history" on "ledger_entries"
      ("account_id", "asset", "booked_at", "balance_seq") where "account_id" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "ledger_entries_balance_history";`);
    this.addSql(`alter table "ledger_entries" drop column "balance_seq", drop column "booked_at",
      drop column "available_after", drop column "held_after";`);
    this.addSql(`alter table "balances" drop column "seq", drop column "booked_at";`);
  }
}

export const BACKFILL_BALANCE_HISTORY_SQL = `
  with moves as (
    select transaction_id, account_id, asset, min(created_at) as created_at,
           coalesce(sum(amount) filter (where book = 'available'), 0) as available,
           coalesce(sum(amount) filter (where book = 'held'), 0) as held
    from ledger_entries where account_id is not null and balance_seq is null
    group by transaction_id, account_id, asset
  ), history as (
    select transaction_id, account_id, asset, created_at,
           row_number() over w as seq,
           sum(available) over w as available_after,
           sum(held) over w as held_after
    from moves
    window w as (partition by account_id, asset order by created_at, transaction_id
                 rows between unbounded preceding and current row)
  )
  update ledger_entries e set balance_seq = h.seq, booked_at = h.created_at,
    available_after = h.available_after, held_after = h.held_after
  from history h
  where e.transaction_id = h.transaction_id and e.account_id = h.account_id and e.asset = h.asset;`;
