import { Migration } from '@mikro-orm/migrations';

/**
 * `crypto_transfer_refusals` (docs/decisions/0344): a hot-wallet transfer id (`payout:…`, `return:…`) refused before
 * it was given a nonce. The nonce writer gives such an id none, ever: a request for it still parked at the wallet's
 * workflow (an attempt that timed out while it waited) would otherwise take a nonce nothing signs or sends, and every
 * later transfer of the wallet would wait behind it.
 */
export class Migration20261205500000CryptoTransferRefusals extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists "crypto_transfer_refusals" (
      "id" text primary key,
      "reason" text not null,
      "created_at" timestamptz not null default now()
    );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "crypto_transfer_refusals";`);
  }
}
