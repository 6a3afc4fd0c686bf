import { Migration } from '@mikro-orm/migrations';

/**
 * The audit chain becomes keyed (decision 0069): each new row's `hash` is an HMAC-SHA256 with AUDIT_KEY, and `key_id`
 * names the key (a fingerprint, never the key). Rows written before have no key id; `audit_chain_start` records where
 * they end, so rows after it that claim to be unkeyed are an edit. An edited unkeyed row still breaks the chain at the
 * first keyed row, whose HMAC covers its `prev_hash`.
 */
export class Migration20261126400001AuditChainKeyed extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "audit_log" add column "key_id" varchar(16) null;`);
    this.addSql(`create table "audit_chain_start" ("unkeyed_until" bigint not null);`);
    this.addSql(`insert into "audit_chain_start" select coalesce(max("seq"), 0) from "audit_log";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "audit_chain_start";`);
    this.addSql(`alter table "audit_log" drop column "key_id";`);
  }
}
