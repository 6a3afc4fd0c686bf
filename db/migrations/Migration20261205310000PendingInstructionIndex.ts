import { Migration } from '@mikro-orm/migrations';

/**
 * What `cambio instruction list` reads (docs/decisions/0311): a partial index of the payment instructions waiting for
 * review, by creation, so the list reads the handful waiting instead of scanning every instruction. An instruction
 * leaves it with its decision.
 */
export class Migration20261205310000PendingInstructionIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists "payment_instructions_pending_review_index" on "payment_instructions"
         ("created_at", "id") where "status" = 'PENDING_REVIEW';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "payment_instructions_pending_review_index";`);
  }
}
