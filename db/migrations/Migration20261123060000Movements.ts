import { Migration } from '@mikro-orm/migrations';

/**
 * Movements of every COMPLETED operation, at its COMPLETED state's moment, with the legs of domain/movements.ts.
 * Exported so a test can check it rebuilds exactly what the write path records.
 */
export const BACKFILL_MOVEMENTS_SQL = `
  insert into "movements" ("operation_id", "account_id", "asset", "direction", "customer_id", "amount", "completed_at", "tags")
  select o."id", leg.account_id, leg.asset, leg.direction, o."customer_id", leg.amount, done.at,
    coalesce((select jsonb_agg(jsonb_build_object('key', t->'key', 'value', t->'value')) from jsonb_array_elements(o."tags") t), '[]')
  from "operations" o
  cross join lateral (
    select max((s->>'createdAt')::timestamptz) as at from jsonb_array_elements(o."states") s where s->>'status' = 'COMPLETED'
  ) done
  cross join lateral (values
    (case when o."type" in ('WITHDRAWAL', 'SWAP', 'TRANSFER') then o."account_id" end, o."source_asset", 'OUTFLOW', o."source_amount"),
    (case when o."type" in ('DEPOSIT', 'SWAP') then o."account_id" when o."type" = 'TRANSFER' then o."target_account_id" end,
     o."target_asset", 'INFLOW', o."target_amount")
  ) leg(account_id, asset, direction, amount)
  where o."status" = 'COMPLETED' and leg.account_id is not null
  on conflict do nothing;`;

/** Daily totals of the movements that have none yet. */
export const BACKFILL_DAYS_SQL = `
  insert into "movement_days" ("customer_id", "day", "account_id", "asset", "direction", "tags", "sum", "count")
  select "customer_id", ("completed_at" at time zone 'UTC')::date, "account_id", "asset", "direction", "tags", sum("amount"), count(*)
  from "movements" group by 1, 2, 3, 4, 5, 6
  on conflict do nothing;`;

/**
 * Reports read settled money movements, never the operations' JSON: one row per operation and account side,
 * written in the transaction that completes the operation, plus daily totals (per account, asset, direction and
 * tag set) kept in that same transaction, so a long window sums a few thousand rows instead of every movement.
 */
export class Migration20261123060000Movements extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "movements" (
        "operation_id" uuid not null,
        "account_id" uuid not null,
        "asset" varchar(8) not null,
        "direction" varchar(8) not null check ("direction" in ('INFLOW', 'OUTFLOW')),
        "customer_id" uuid not null,
        "amount" numeric not null check ("amount" > 0),
        "completed_at" timestamptz(3) not null,
        "tags" jsonb not null default '[]',
        -- A retried completion finds its rows instead of writing them twice.
        constraint "movements_pkey" primary key ("operation_id", "account_id", "asset", "direction")
      );`);
    // The report's two access paths, covering (index-only scans): a customer's window, and one account's window.
    this.addSql(`create index "movements_report_index" on "movements" ("customer_id", "completed_at") include ("account_id", "asset", "direction", "amount");`);
    this.addSql(`create index "movements_account_index" on "movements" ("customer_id", "account_id", "completed_at") include ("asset", "direction", "amount");`);
    this.addSql(`
      create table "movement_days" (
        "customer_id" uuid not null,
        "day" date not null,
        "account_id" uuid not null,
        "asset" varchar(8) not null,
        "direction" varchar(8) not null check ("direction" in ('INFLOW', 'OUTFLOW')),
        "sum" numeric not null,
        "count" bigint not null,
        -- The operations' tags, so a tag filter is answered from the totals too: every movement of a row shares
        -- its account, asset and tags, hence every filter matches all of a row or none of it.
        "tags" jsonb not null default '[]',
        constraint "movement_days_pkey" primary key ("customer_id", "day", "account_id", "asset", "direction", "tags")
      );`);
    // Operations completed before this migration get their movements and daily totals, so reports cover the
    // whole history from the first deploy.
    this.addSql(BACKFILL_MOVEMENTS_SQL);
    this.addSql(BACKFILL_DAYS_SQL);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "movement_days";`);
    this.addSql(`drop table if exists "movements";`);
  }
}
