import { Migration } from '@mikro-orm/migrations';

/**
 * Workflow starts are the worker's job: an outbox row says which task queue's worker starts it, and its COMMIT
 * wakes that worker's relay at once (worker/workflow-start-relay.ts, decision 0023).
 *
 * - `task_queue` names the worker pool that runs the workflow. Rows written before this column (null) belong to
 *   any relay: every relay then served the one queue of its deployment.
 * - The trigger is the wake-up: `pg_notify` is transactional, so a relay hears of a row exactly when it can see
 *   it (at COMMIT, never for a rollback), whoever wrote it. Postgres folds the notifications of one transaction
 *   that carry the same payload into one, so a transaction that fans out to many deliveries wakes a relay once.
 */
export class Migration20261124000000WorkflowStartWakeUp extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "workflow_starts" add column "task_queue" varchar(255) null;`);
    this.addSql(`
      create function "notify_workflow_start"() returns trigger language plpgsql as $$
      begin
        perform pg_notify('cambio_workflow_starts', coalesce(new.task_queue, ''));
        return null;
      end $$;`);
    this.addSql(`
      create trigger "workflow_starts_notify" after insert on "workflow_starts"
      for each row execute function "notify_workflow_start"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "workflow_starts_notify" on "workflow_starts";`);
    this.addSql(`drop function "notify_workflow_start"();`);
    this.addSql(`alter table "workflow_starts" drop column "task_queue";`);
  }
}
