import { Migration } from '@mikro-orm/migrations';

/**
 * Least privilege (decision 0070): the role that migrates owns the tables; `cambio_app` (no login of its own;
 * `npm run migrate` grants it to the login role of DATABASE_URL, see
 * db/application-role.ts) may read and write rows and nothing more: no DDL (it owns nothing, so it cannot ALTER,
 * DROP or disable a trigger), no TRUNCATE, and only INSERT and SELECT on the append-only tables (audit_log,
 * workflow_decisions) and SELECT on audit_chain_start. Tables that later migrations create get the same row
 * rights by default; a later append-only table revokes UPDATE and DELETE in its own migration.
 * Creating the role needs CREATEROLE; an owner without it finds it created beforehand by a DBA
 * (`create role cambio_app nologin`).
 */
export class Migration20261126400002ApplicationRole extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      do $$
      begin
        if not exists (select 1 from pg_roles where rolname = 'cambio_app') then
          begin
            create role cambio_app nologin;
          exception when duplicate_object then
            null; -- created meanwhile by the migration of another database of the same cluster
          end;
        end if;
      end $$;`);
    this.addSql(`grant usage on schema public to cambio_app;`);
    this.addSql(`grant select, insert, update, delete on all tables in schema public to cambio_app;`);
    this.addSql(`grant usage, select on all sequences in schema public to cambio_app;`);
    this.addSql(`revoke update, delete on "audit_log", "workflow_decisions" from cambio_app;`);
    this.addSql(`revoke insert, update, delete on "audit_chain_start", "mikro_orm_migrations" from cambio_app;`);
    this.addSql(`alter default privileges in schema public grant select, insert, update, delete on tables to cambio_app;`);
    this.addSql(`alter default privileges in schema public grant usage, select on sequences to cambio_app;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter default privileges in schema public revoke all on tables from cambio_app;`);
    this.addSql(`alter default privileges in schema public revoke all on sequences from cambio_app;`);
    this.addSql(`revoke all on all tables in schema public from cambio_app;`);
    this.addSql(`revoke all on all sequences in schema public from cambio_app;`);
    this.addSql(`revoke usage on schema public from cambio_app;`);
  }
}
