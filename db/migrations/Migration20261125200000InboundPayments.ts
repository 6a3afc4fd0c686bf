import { Migration } from '@mikro-orm/migrations';

/**
 * Inbound payments become a first-class record (decision 0045).
 *
 * - `status` MATCHED | UNMATCHED | RETURNED | CREDITED; `decided` is false from the moment the rail's report is
 *   recorded until the deposit's workflow (or, for a closed deposit, the service) has decided it. Rows written
 *   before this migration were all counted by their deposit: MATCHED and decided.
 * - `operation_id` may be null (a payment credited by an operator points at the DEPOSIT it created instead);
 *   `account_id` is the account it was meant for or credited to; `rail` the deposit's rail.
 * - One record per rail reference and customer: the unique index covers the reported records, not the remainder
 *   split off an overpayment (`remainder_of`), which keeps its parent's end-to-end id.
 */
export class Migration20261125200000InboundPayments extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "inbound_payments" alter column "operation_id" drop not null;`);
    this.addSql(`alter table "inbound_payments"
      add column "account_id" uuid null,
      add column "rail" varchar(16) not null default 'PIX_KEY',
      add column "status" varchar(16) not null default 'MATCHED',
      add column "decided" boolean not null default true,
      add column "remainder_of" uuid null,
      add column "return_end_to_end_id" varchar(64) null,
      add column "return_reason" text null,
      add column "updated_at" timestamptz(3) null;`);
    this.addSql(`update "inbound_payments" p
      set "account_id" = o."account_id", "rail" = coalesce(o."intent"->'fundingInstruction'->>'rail', 'PIX_KEY'),
          "updated_at" = p."created_at"
      from "operations" o where o."id" = p."operation_id";`);
    this.addSql(`update "inbound_payments" set "updated_at" = "created_at" where "updated_at" is null;`);
    this.addSql(`alter table "inbound_payments"
      alter column "updated_at" set not null, alter column "decided" set default false;`);
    this.addSql(`alter table "inbound_payments" add constraint "inbound_payments_status_check"
      check ("status" in ('MATCHED', 'UNMATCHED', 'RETURNED', 'CREDITED'));`);
    this.addSql(`alter table "inbound_payments" drop constraint "inbound_payments_end_to_end_id_unique";`);
    this.addSql(`create unique index "inbound_payments_reference_unique"
      on "inbound_payments" ("customer_id", "end_to_end_id") where "remainder_of" is null;`);
    this.addSql(`create index "inbound_payments_list_index"
      on "inbound_payments" ("customer_id", "created_at", "id");`);
    // The sweep looks for records nobody decided; there are few, so a partial index keeps it cheap.
    this.addSql(`create index "inbound_payments_undecided_index"
      on "inbound_payments" ("created_at") where not "decided";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "inbound_payments_undecided_index";`);
    this.addSql(`drop index "inbound_payments_list_index";`);
    this.addSql(`drop index "inbound_payments_reference_unique";`);
    this.addSql(`delete from "inbound_payments" where "remainder_of" is not null or "operation_id" is null;`);
    this.addSql(`alter table "inbound_payments"
      add constraint "inbound_payments_end_to_end_id_unique" unique ("end_to_end_id");`);
    this.addSql(`alter table "inbound_payments" drop constraint "inbound_payments_status_check";`);
    this.addSql(`alter table "inbound_payments" drop column "account_id", drop column "rail", drop column "status",
      drop column "decided", drop column "remainder_of", drop column "return_end_to_end_id",
      drop column "return_reason",
      drop column "updated_at";`);
    this.addSql(`alter table "inbound_payments" alter column "operation_id" set not null;`);
  }
}
