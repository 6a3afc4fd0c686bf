import { Migration } from '@mikro-orm/migrations';

/**
 * A one-line summary an operator reads in the Temporal UI's workflow list (`staticSummary` of the start, e.g.
 * `DEPOSIT 100.00 BRL via PIX_KEY to Acme Ltda`), carried by the outbox row to the relay that starts it. Null for
 * rows written before it: they start without one.
 */
export class Migration20261125200003WorkflowStartSummary extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "workflow_starts" add column "summary" text null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "workflow_starts" drop column "summary";`);
  }
}
