import { Migration } from '@mikro-orm/migrations';

/**
 * Issued statements (decision 0073): one per account, asset and closed period, its JSON form kept as the exact text
 * that was hashed. The id derives from account, asset and period (statements/statement.ts), so issuing a period again
 * meets the first row and inserts nothing.
 */
export class Migration20261126200001IssuedStatements extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "statements" ("id" uuid not null, "customer_id" uuid not null references "customers" ("id"),
      "account_id" uuid not null references "accounts" ("id"), "asset" varchar(255) not null,
      "period_start" timestamptz(3) not null, "period_end" timestamptz(3) not null, "sha256" varchar(64) not null,
      "body" text not null, "created_at" timestamptz(3) not null, constraint "statements_pkey" primary key ("id"));`);
    this.addSql(`create index "statements_list_index" on "statements" ("customer_id", "created_at", "id");`);
    this.addSql(`create index "statements_account_index" on "statements" ("account_id", "asset", "period_start");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "statements";`);
  }
}
