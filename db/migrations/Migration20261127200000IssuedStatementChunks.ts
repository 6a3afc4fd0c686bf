import { Migration } from '@mikro-orm/migrations';

/**
 * An issued statement's JSON text in pieces (decision 0083): a statement of a million entries is hundreds of megabytes,
 * which one `text` value would make the worker build and the API read whole. Each piece ends on an entry boundary
 * (statements/issued-body.ts reads one piece at a time); the statement row names its body (`body_id`), written piece by
 * piece before the row commits, so a body whose row never committed is unreferenced and purged. An existing body
 * becomes one piece.
 */
export class Migration20261127200000IssuedStatementChunks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "statement_chunks" ("body_id" uuid not null, "n" int not null, "text" text not null,
      "created_at" timestamptz not null default now(), constraint "statement_chunks_pkey" primary key ("body_id", "n"));`);
    this.addSql(`alter table "statements" add column "body_id" uuid null;`);
    this.addSql(`update "statements" set "body_id" = gen_random_uuid();`);
    this.addSql(`insert into "statement_chunks" ("body_id", "n", "text", "created_at")
      select "body_id", 0, "body", "created_at" from "statements";`);
    this.addSql(`alter table "statements" alter column "body_id" set not null, drop column "body";`);
    this.addSql(`create unique index "statements_body_id_unique" on "statements" ("body_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "statements" add column "body" text null;`);
    this.addSql(`update "statements" s set "body" = (select string_agg(c."text", '' order by c."n")
      from "statement_chunks" c where c."body_id" = s."body_id");`);
    this.addSql(`alter table "statements" alter column "body" set not null, drop column "body_id";`);
    this.addSql(`drop table "statement_chunks";`);
  }
}
