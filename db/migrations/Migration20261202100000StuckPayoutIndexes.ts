import { Migration } from '@mikro-orm/migrations';

/**
 * What `cambio_payouts_stuck` and `cambio_returns_stuck` read on every scrape (docs/decisions/0120): partial
 * indexes that hold only the withdrawals PROCESSING and the payments RETURNING, by the time they last changed, so
 * the scrape's count reads a handful of index entries instead of scanning operations and inbound_payments. A row
 * leaves its index as soon as it moves on. `cambio operation list --stuck` reads the first one too.
 */
export class Migration20261202100000StuckPayoutIndexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index "operations_processing_withdrawals_index" on "operations" ("updated_at")
         where "type" = 'WITHDRAWAL' and "status" = 'PROCESSING';`,
    );
    this.addSql(
      `create index "inbound_payments_returning_index" on "inbound_payments" ("updated_at")
         where "status" = 'RETURNING';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "inbound_payments_returning_index";`);
    this.addSql(`drop index if exists "operations_processing_withdrawals_index";`);
  }
}
