import { Migration } from '@mikro-orm/migrations';

/**
 * Where a deployment's reconciliation of a rail begins (docs/decisions/0111): `rail_origins` holds, per rail, the
 * first start of a process of this deployment that had the rail's provider configured. The first reconciliation run
 * lists from there (or from PIX_RECONCILE_FROM), never from the beginning of the provider account's history, and no
 * later window reaches before the first one's start.
 */
export class Migration20261202000000RailOrigins extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "rail_origins" (
      "rail" text primary key,
      "since" timestamptz not null default now()
    );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "rail_origins";`);
  }
}
