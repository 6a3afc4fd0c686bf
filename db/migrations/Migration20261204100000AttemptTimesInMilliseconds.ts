import { Migration } from '@mikro-orm/migrations';

/**
 * An attempt's times in milliseconds, as the entity (db/entities/webhook.ts) and every other list's `created_at`
 * declare them. The attempts list pages on (created_at, id), and its cursor carries the row's time as a JS Date
 * writes it (milliseconds): with the microseconds `now()` stamps, the row at a cursor sorted after the cursor
 * itself, so oldest-first paging handed the same attempt back for ever (decision 0203). The rewrite rounds the
 * rows already written.
 */
export class Migration20261204100000AttemptTimesInMilliseconds extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "webhook_attempts" alter column "created_at" type timestamptz(3), ` +
        `alter column "finished_at" type timestamptz(3);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      `alter table "webhook_attempts" alter column "created_at" type timestamptz, ` +
        `alter column "finished_at" type timestamptz;`,
    );
  }
}
