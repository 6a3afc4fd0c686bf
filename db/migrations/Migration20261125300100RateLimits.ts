import { Migration } from '@mikro-orm/migrations';

/**
 * The deployment-wide per-customer rate limit's counters (db/repositories/rate-limits.ts): the table
 * rate-limiter-flexible's Postgres store expects (its own create statement), created here so that no API process
 * runs DDL at start. Rows are one per customer and window; the library deletes expired ones hourly.
 */
export class Migration20261125300100RateLimits extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "rate_limits" ("key" varchar(255) primary key, "points" integer not null default 0, "expire" bigint);`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "rate_limits";`);
  }
}
