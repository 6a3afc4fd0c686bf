import { Migration } from '@mikro-orm/migrations';

/**
 * The operators' audit log (decision 0049): append-only, hash-chained. `seq` orders the chain; `prev_hash` is the hash
 * of the row before (empty for the first) and `hash` covers it with the row's own fields, so an edited, removed or
 * reordered row breaks the chain where `cambio audit verify` looks. A trigger refuses UPDATE, DELETE and TRUNCATE: an
 * edit takes a superuser disabling it on purpose.
 */
export class Migration20261125200001AuditLog extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "audit_log" (
      "seq" bigserial not null,
      "id" uuid not null,
      "at" timestamptz(3) not null,
      "operator" varchar(255) not null,
      "action" varchar(64) not null,
      "target" varchar(255) not null,
      "reason" text null,
      "details" jsonb not null,
      "prev_hash" varchar(64) not null,
      "hash" varchar(64) not null,
      constraint "audit_log_pkey" primary key ("seq"),
      constraint "audit_log_id_unique" unique ("id"));`);
    this.addSql(`create index "audit_log_at_index" on "audit_log" ("at");`);
    this.addSql(`
      create function "audit_log_refuse_change"() returns trigger language plpgsql as $$
      begin
        raise exception 'audit_log is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
      end $$;`);
    this.addSql(`create trigger "audit_log_append_only" before update or delete on "audit_log"
      for each row execute function "audit_log_refuse_change"();`);
    this.addSql(`create trigger "audit_log_no_truncate" before truncate on "audit_log"
      for each statement execute function "audit_log_refuse_change"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "audit_log";`);
    this.addSql(`drop function "audit_log_refuse_change"();`);
  }
}
