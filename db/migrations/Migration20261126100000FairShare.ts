import { Migration } from '@mikro-orm/migrations';

/**
 * A customer's volume can only slow that customer (decision 0072):
 * - `workflow_starts.fairness_key`: the customer a start is for, derived from its `CustomerId` search attribute
 *   (every writer sets it; '' for the few rows without one), so the relay can take rows round-robin across
 *   customers (db/repositories/outbox.ts, `claimStarts`). Generated, so no writer has to change. Not named
 *   `customer_id`: the outbox is the system's, read by the relay for every customer, and a tenant column would
 *   owe a foreign key to customers (test/integration/customer-access.test.ts) that a queue row has no use for.
 * - `workflow_starts_fair_index`: the relay's claim walks the distinct customers of a queue (a skip scan on the
 *   first two columns) and, for each, its oldest due rows (all four). It replaces the plain `next_attempt_at`
 *   index, which only the old first-come claim used. Rows from before task queues were recorded (null) have a
 *   small partial index of their own.
 * - `operations_pending_index`: the admission check counts a customer's operations accepted but not yet started
 *   (REQUESTED; a deposit's REQUESTED is a wait for money, not for the engine), bounded by a LIMIT, and reads the
 *   oldest one's age for Retry-After: both from this small index, whatever the size of the table.
 */
export class Migration20261126100000FairShare extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "workflow_starts" add column "fairness_key" varchar(255)
      generated always as (coalesce("search_attributes" ->> 'CustomerId', '')) stored;`);
    this.addSql(`create index "workflow_starts_fair_index"
      on "workflow_starts" ("task_queue", "fairness_key", "next_attempt_at", "created_at");`);
    this.addSql(`create index "workflow_starts_unqueued_index"
      on "workflow_starts" ("next_attempt_at", "created_at") where "task_queue" is null;`);
    this.addSql(`drop index "workflow_starts_next_attempt_index";`);
    this.addSql(`create index "operations_pending_index" on "operations" ("customer_id", "created_at")
      where "status" = 'REQUESTED' and "type" <> 'DEPOSIT';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "operations_pending_index";`);
    this.addSql(`create index "workflow_starts_next_attempt_index" on "workflow_starts" ("next_attempt_at");`);
    this.addSql(`drop index "workflow_starts_unqueued_index";`);
    this.addSql(`drop index "workflow_starts_fair_index";`);
    this.addSql(`alter table "workflow_starts" drop column "fairness_key";`);
  }
}
