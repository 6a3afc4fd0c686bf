import { Migration } from '@mikro-orm/migrations';

/**
 * A return's end-to-end id holds a CRYPTO return's transaction hash (`0x` and 64 hex digits: 66 characters), which
 * the 64 characters sized for a PIX `rtrId` could not: the tokens went back, and the payment could not be marked
 * RETURNED. As wide as the payment's own end-to-end id.
 */
export class Migration20261202900000ReturnEndToEndHash extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "inbound_payments" alter column "return_end_to_end_id" type varchar(255);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "inbound_payments" alter column "return_end_to_end_id" type varchar(64);`);
  }
}
