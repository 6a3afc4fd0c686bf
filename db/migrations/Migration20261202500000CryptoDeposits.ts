import { Migration } from '@mikro-orm/migrations';

/**
 * CRYPTO deposits on a real chain (../shared/spec/decisions.md, "Crypto: stablecoins on a real chain (EVM)";
 * decisions 0130-0132).
 *
 * - `crypto_deposit_address_index`: deposit i receives at `0/i` below CRYPTO_DEPOSIT_XPUB; i comes from here, so no
 *   two deposits ever share an address, whatever the number of API processes.
 * - A deposit's `walletAddress` names it system-wide, as a PIX charge's txid does: the scanner finds the deposit of
 *   a transfer by it (lower case, as logs carry addresses).
 * - `inbound_payments` gains PENDING (seen on the chain, fewer than EVM_CONFIRMATIONS blocks deep: in no balance,
 *   not in the suspense, not in the books) and DROPPED (its block left the chain before it was confirmed; never
 *   credited), with the chain's facts about it: the block, its hash, the confirmations counted at the last scan,
 *   and the token units sent (the amount may not hold them exactly: dust below 6 decimals).
 * - `chain_scan_cursors`: per chain, the first block the scanner has not read yet. It moves in the transaction
 *   that records the range's transfers, so a scanner killed mid-range reads the range again and records nothing
 *   twice (the rail reference is unique).
 */
export class Migration20261202500000CryptoDeposits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create sequence "crypto_deposit_address_index" as integer minvalue 0 start 0;`);
    this.addSql(
      `create unique index "operations_deposit_wallet_unique"
         on "operations" ((lower("intent" -> 'fundingInstruction' ->> 'walletAddress')))
         where "type" = 'DEPOSIT' and ("intent" -> 'fundingInstruction' ->> 'rail') = 'CRYPTO'
           and ("intent" -> 'fundingInstruction' ->> 'tokenContract') is not null;`,
    );
    this.addSql(`alter table "inbound_payments" drop constraint "inbound_payments_status_check";`);
    this.addSql(`alter table "inbound_payments" add constraint "inbound_payments_status_check"
      check ("status" in ('PENDING', 'DROPPED', 'RECEIVED', 'MATCHED', 'UNMATCHED', 'RETURNING', 'RETURNED',
        'CREDITED'));`);
    this.addSql(`alter table "inbound_payments"
      add column "confirmations" integer null,
      add column "block_number" bigint null,
      add column "block_hash" varchar(66) null,
      add column "token_units" numeric(78, 0) null;`);
    this.addSql(`create index "inbound_payments_pending_index" on "inbound_payments" ("block_number")
      where "status" = 'PENDING';`);
    this.addSql(`create table "chain_scan_cursors" (
      "chain_id" bigint primary key,
      "next_block" bigint not null,
      "updated_at" timestamptz(3) not null default now());`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "chain_scan_cursors";`);
    this.addSql(`drop index "inbound_payments_pending_index";`);
    this.addSql(`delete from "inbound_payments" where "status" in ('PENDING', 'DROPPED');`);
    this.addSql(`alter table "inbound_payments" drop column "confirmations", drop column "block_number",
      drop column "block_hash", drop column "token_units";`);
    this.addSql(`alter table "inbound_payments" drop constraint "inbound_payments_status_check";`);
    this.addSql(`alter table "inbound_payments" add constraint "inbound_payments_status_check"
      check ("status" in ('RECEIVED', 'MATCHED', 'UNMATCHED', 'RETURNING', 'RETURNED', 'CREDITED'));`);
    this.addSql(`drop index "operations_deposit_wallet_unique";`);
    this.addSql(`drop sequence "crypto_deposit_address_index";`);
  }
}
