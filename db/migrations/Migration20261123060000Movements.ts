import { Migration } from '@mikro-orm/migrations';

/**
 * Reports read settled money movements, never the operations' JSON: one row per operation and account side,
 * written in the transaction that completes the operation, plus daily totals kept in that same transaction
 * so a long window sums a few hundred bucket rows instead of every movement.
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
        constraint "movement_days_pkey" primary key ("customer_id", "day", "account_id", "asset", "direction")
      );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "movement_days";`);
    this.addSql(`drop table if exists "movements";`);
  }
}
