import { Migration } from '@mikro-orm/migrations';

/**
 * CRYPTO payouts and returns from the hot wallet (docs/decisions/0134, 0135):
 * - `payment_instructions.network`: a WALLET instruction's chain (CRYPTO_NETWORK); null for PIX keys.
 * - `crypto_hot_wallets`: per hot wallet and chain, the next nonce to give. Its row lock is what serialises nonce
 *   assignment: one writer at a time, whatever the number of workers.
 * - `crypto_outgoing_txs`: one row per payout or return (our id), its nonce (unique per wallet), then the signed
 *   transaction's raw bytes and hash, stored before the first broadcast so every retry sends the same bytes.
 */
export class Migration20261202600000CryptoPayouts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "payment_instructions" add column "network" varchar(255) null;`);
    this.addSql(`create table "crypto_hot_wallets" (
      "chain_id" bigint not null,
      "address" text not null,
      "next_nonce" bigint not null,
      primary key ("chain_id", "address")
    );`);
    this.addSql(`create table "crypto_outgoing_txs" (
      "id" text primary key,
      "chain_id" bigint not null,
      "wallet" text not null,
      "nonce" bigint not null,
      "token" text not null,
      "recipient" text not null,
      "units" numeric(78, 0) not null,
      "raw" text null,
      "hash" text null,
      "final" boolean not null default false,
      "created_at" timestamptz not null default now(),
      unique ("chain_id", "wallet", "nonce")
    );`);
    this.addSql(
      `create index "crypto_outgoing_txs_open_index" on "crypto_outgoing_txs" ("chain_id", "wallet") where not "final";`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "crypto_outgoing_txs";`);
    this.addSql(`drop table "crypto_hot_wallets";`);
    this.addSql(`alter table "payment_instructions" drop column "network";`);
  }
}
