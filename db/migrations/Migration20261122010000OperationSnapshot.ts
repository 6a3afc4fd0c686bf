import { Migration } from '@mikro-orm/migrations';

// An operation keeps what it shows of its account and quote (owner name, rate, expiry, consumption time), fixed
// at creation: reading or announcing an operation is then one row, not three.
export class Migration20261122010000OperationSnapshot extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "operations" add column "account_owner" varchar(255) not null default '';`);
    this.addSql(`alter table "operations" add column "quote_ref" jsonb not null default '{}';`);
    this.addSql(`update "operations" o set "account_owner" = a."legal_name" from "accounts" a where a."id" = o."account_id";`);
    this.addSql(`update "operations" o set "quote_ref" = jsonb_build_object(
      'id', q."id",
      'effectiveRate', jsonb_build_object('value', q."effective_rate", 'base', q."source_asset", 'quote', q."target_asset"),
      'expiresAt', to_char(q."expires_at" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'consumedAt', to_char(q."consumed_at" at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      from "quotes" q where q."id" = o."quote_id";`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "operations" drop column "account_owner", drop column "quote_ref";`);
  }
}
