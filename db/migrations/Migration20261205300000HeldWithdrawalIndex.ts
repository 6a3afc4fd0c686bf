import { Migration } from '@mikro-orm/migrations';

/**
 * What `cambio operation list --held` reads (docs/decisions/0268): a partial index of the withdrawals ON_HOLD by the
 * time they went on hold, so the list reads the handful waiting for a decision instead of scanning operations. A
 * withdrawal leaves it with its decision.
 */
export class Migration20261205300000HeldWithdrawalIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists "operations_held_withdrawals_index" on "operations" ("updated_at", "id")
         where "type" = 'WITHDRAWAL' and "status" = 'ON_HOLD';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "operations_held_withdrawals_index";`);
  }
}
