import { Migration } from '@mikro-orm/migrations';

/**
 * The daily totals are keyed by the md5 of their tag set instead of the tag set itself (decision 0217). A btree entry
 * holds at most 2704 bytes: an operation whose account propagates tags longer than that (a note an operator pasted)
 * could not add its movements to the totals, so the step that settles it failed, was retried for ever, and the
 * operation stayed REQUESTED or PROCESSING with its funds held. jsonb writes one text for equal values (its keys
 * sorted), so equal tag sets still share one row.
 */
export class Migration20261204200000MovementDayTagsKey extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "movement_days" add column "tags_key" text generated always as (md5("tags"::text)) stored;`,
    );
    this.addSql(
      `alter table "movement_days" drop constraint "movement_days_pkey", add constraint "movement_days_pkey" ` +
        `primary key ("customer_id", "day", "account_id", "asset", "direction", "tags_key");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "movement_days" drop constraint "movement_days_pkey", add constraint "movement_days_pkey" ` +
        `primary key ("customer_id", "day", "account_id", "asset", "direction", "tags");`,
    );
    this.addSql(`alter table "movement_days" drop column "tags_key";`);
  }
}
