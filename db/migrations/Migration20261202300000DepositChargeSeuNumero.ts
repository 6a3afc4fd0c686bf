import { Migration } from '@mikro-orm/migrations';

/**
 * A BOLETO deposit's charge id (`intent.fundingInstruction.seuNumero`, our id of the boleto at the bank) names one
 * deposit, system-wide, as a PIX txid does (Migration20261127000000DepositChargeTxid): a notice or a listed payment
 * finds its deposit by it, and no boleto can be paid into two deposits.
 */
export class Migration20261202300000DepositChargeSeuNumero extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create unique index "operations_deposit_seu_numero_unique" on "operations" ((("intent" -> 'fundingInstruction' ->> 'seuNumero')))
       where "type" = 'DEPOSIT' and ("intent" -> 'fundingInstruction' ->> 'seuNumero') is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "operations_deposit_seu_numero_unique";`);
  }
}
