import { Migration } from '@mikro-orm/migrations';

/**
 * `workflow_decision_requeues` (docs/decisions/0345): a request whose decision was already recorded (the same
 * decision again, decision 0317) records nothing under its own id but sends the earlier one; this row says so, so
 * that the same request run again (a retry after its COMMIT) sends that decision again instead of finding the review
 * decided and answering 409.
 */
export class Migration20261205510000DecisionRequeues extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists "workflow_decision_requeues" (
      "request_id" uuid primary key,
      "decision_id" uuid not null,
      "created_at" timestamptz not null default now()
    );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "workflow_decision_requeues";`);
  }
}
