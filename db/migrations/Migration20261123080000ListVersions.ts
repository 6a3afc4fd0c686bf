import { Migration } from '@mikro-orm/migrations';

// The tables a customer's account list is drawn from: the accounts, their UBOs and their documents.
const ACCOUNT_LIST_TABLES = ['accounts', 'ubos', 'account_documents'] as const;

/**
 * A version per (customer, list) that changes in the same transaction as any row the list shows, whoever writes
 * it (the API, the review workflow, an operator's SQL): an API process may then answer a list page from a copy it
 * made earlier, after checking in one small statement that the version is still the one the copy was read at
 * (db/lists/page-copies.ts, decision 0037).
 *
 * - Versions come from one sequence, so a value is never handed out twice, not even after a row was removed.
 * - The triggers are deferred to COMMIT: the version row is locked last and only for the commit, so writers of
 *   one customer queue there briefly instead of holding it across their own work (and cannot deadlock on it).
 * - A transaction renews a customer's version once (a transaction-local setting remembers it), however many rows
 *   it changed: a bulk insert of a million accounts costs a flag check per row, not a million updates of one row
 *   (which took longer than a quarter of an hour).
 * - A page and the version it was read at come from one statement, hence one snapshot; a committed version
 *   therefore names exactly one state of the list.
 * - TRUNCATE fires no row trigger: a statement trigger gives every version of the list a new value instead.
 * - Every customer with accounts has a version row (the migration writes one for accounts that predate it); a
 *   page read without one is never kept.
 */
export class Migration20261123080000ListVersions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create sequence "list_version_seq";`);
    this.addSql(`
      create table "list_versions" (
        "customer_id" uuid not null,
        "list" text not null,
        "version" bigint not null,
        constraint "list_versions_pkey" primary key ("customer_id", "list"),
        constraint "list_versions_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update restrict on delete restrict
      );`);
    this.addSql(`
      create function "bump_list_version"() returns trigger language plpgsql as $$
      declare
        customer uuid;
        renewed text;
      begin
        if tg_op = 'DELETE' then customer := old.customer_id; else customer := new.customer_id; end if;
        -- Once per transaction, customer and list: whatever else it changed becomes visible at the same COMMIT.
        renewed := 'cambio_list_version.' || tg_argv[0] || '_' || replace(customer::text, '-', '');
        if current_setting(renewed, true) = 'yes' then return null; end if;
        perform set_config(renewed, 'yes', true);
        insert into "list_versions" ("customer_id", "list", "version") values (customer, tg_argv[0], nextval('list_version_seq'))
        on conflict ("customer_id", "list") do update set "version" = excluded."version";
        return null;
      end $$;`);
    this.addSql(`
      create function "renew_list_versions"() returns trigger language plpgsql as $$
      begin
        update "list_versions" set "version" = nextval('list_version_seq') where "list" = tg_argv[0];
        return null;
      end $$;`);
    for (const table of ACCOUNT_LIST_TABLES) {
      this.addSql(
        `create constraint trigger "${table}_list_version" after insert or update or delete on "${table}" ` +
          `deferrable initially deferred for each row execute function "bump_list_version"('accounts');`,
      );
      this.addSql(`create trigger "${table}_list_truncated" after truncate on "${table}" for each statement execute function "renew_list_versions"('accounts');`);
    }
    // Lists that already have rows start at a version of their own.
    this.addSql(`
      insert into "list_versions" ("customer_id", "list", "version")
      select "customer_id", 'accounts', nextval('list_version_seq') from (select distinct "customer_id" from "accounts") c;`);
  }

  override async down(): Promise<void> {
    for (const table of ACCOUNT_LIST_TABLES) {
      this.addSql(`drop trigger "${table}_list_version" on "${table}";`);
      this.addSql(`drop trigger "${table}_list_truncated" on "${table}";`);
    }
    this.addSql(`drop function "renew_list_versions"();`);
    this.addSql(`drop function "bump_list_version"();`);
    this.addSql(`drop table "list_versions";`);
    this.addSql(`drop sequence "list_version_seq";`);
  }
}
