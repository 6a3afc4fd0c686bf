import { Migration } from '@mikro-orm/migrations';

/**
 * The relay claims outbox rows with a lease instead of a transaction held across its Temporal calls
 * (db/repositories/workflow-starts.ts, decision 0055):
 * - `claimed_until`: a relay owns the row until then; one that died lets it go when the lease runs out.
 * - `attempts`, `next_attempt_at`: a row whose start keeps failing backs off on its own and goes to the back of
 *   the line (passes take rows by `next_attempt_at`), so it never holds up the rows behind it.
 */
export class Migration20261125300000WorkflowStartLease extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "workflow_starts" add column "claimed_until" timestamptz null,
      add column "attempts" int not null default 0,
      add column "next_attempt_at" timestamptz not null default now();`);
    this.addSql(`create index "workflow_starts_next_attempt_index" on "workflow_starts" ("next_attempt_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "workflow_starts_next_attempt_index";`);
    this.addSql(`alter table "workflow_starts" drop column "claimed_until", drop column "attempts", drop column "next_attempt_at";`);
  }
}
