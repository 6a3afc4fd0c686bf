import { Migration } from '@mikro-orm/migrations';

/**
 * Live exchange rates (../shared/spec/decisions.md, "Live exchange rates"; rates/README.md):
 * - `exchange_rates`: one row per source, currency and instant the source gave (`source_time`), `mid` units of
 *   `currency` per 1 `base` as the source published it (numeric: exact, read back as a string). A poll that finds the
 *   same instant again moves only `received_at`, so the row says when the source last answered it.
 * - `quotes.rate_source`, `quotes.rate_source_time`: which rates priced a quote (null on quotes made before).
 */
export class Migration20261202000000ExchangeRates extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "exchange_rates" (
      "source" text not null,
      "currency" text not null,
      "source_time" timestamptz not null,
      "base" text not null,
      "mid" numeric not null check ("mid" > 0),
      "received_at" timestamptz not null,
      constraint "exchange_rates_pkey" primary key ("source", "currency", "source_time")
    );`);
    this.addSql(`alter table "quotes" add column "rate_source" text null, add column "rate_source_time" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "quotes" drop column "rate_source", drop column "rate_source_time";`);
    this.addSql(`drop table "exchange_rates";`);
  }
}
