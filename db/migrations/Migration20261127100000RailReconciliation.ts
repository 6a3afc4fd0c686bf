import { Migration } from '@mikro-orm/migrations';

/**
 * The rails' operations side (docs/decisions/0080): reconciliation runs and the return id of a payment sent back
 * through a PSP. (Notices and reconciliation find a deposit by its charge id through the unique index of
 * Migration20261127000000DepositChargeTxid.)
 * - `rail_reconciliations`: one row per finished run of a rail's reconciliation (the window it listed, how many the
 *   provider listed, how many no notice had brought); the next run starts from the last window's end, less an
 *   overlap.
 * - `inbound_payments.return_id`: our id for the return in flight (PIX: the `devolucao` id), written with RETURNING
 *   before the provider is asked, so a retried or replayed call names the same return.
 */
export class Migration20261127100000RailReconciliation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "rail_reconciliations" (
      "id" uuid primary key,
      "rail" text not null,
      "window_start" timestamptz not null,
      "window_end" timestamptz not null,
      "listed" int not null,
      "late" int not null,
      "created_at" timestamptz not null default now()
    );`);
    this.addSql(`create index "rail_reconciliations_rail_end_index" on "rail_reconciliations" ("rail", "window_end");`);
    this.addSql(`alter table "inbound_payments" add column "return_id" text null;`);
    this.addSql(
      `create unique index "inbound_payments_return_id_unique" on "inbound_payments" ("return_id") where "return_id" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "inbound_payments_return_id_unique";`);
    this.addSql(`alter table "inbound_payments" drop column "return_id";`);
    this.addSql(`drop table "rail_reconciliations";`);
  }
}
