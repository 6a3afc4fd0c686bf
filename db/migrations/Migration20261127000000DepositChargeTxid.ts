import { Migration } from '@mikro-orm/migrations';

/**
 * A PIX deposit's charge id (`intent.fundingInstruction.txid`) names one deposit, system-wide: a notice finds its
 * deposit by it (db/repositories/operations.ts, `depositOfCharge`), and no charge, orphaned by a request that died
 * before its COMMIT or not, can ever be paid into two deposits. Deposits without a charge (other rails, deposits
 * from before) are outside the index.
 */
export class Migration20261127000000DepositChargeTxid extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create unique index "operations_deposit_txid_unique" on "operations" ((("intent" -> 'fundingInstruction' ->> 'txid')))
       where "type" = 'DEPOSIT' and ("intent" -> 'fundingInstruction' ->> 'txid') is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "operations_deposit_txid_unique";`);
  }
}
