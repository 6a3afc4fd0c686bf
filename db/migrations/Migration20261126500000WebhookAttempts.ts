import { Migration } from '@mikro-orm/migrations';

/**
 * Every attempt of a delivery, as Svix keeps its message attempts (db/repositories/webhook-attempts.ts): a row is
 * written before the POST (so a worker that dies mid-attempt leaves a trace, and the retried activity does not
 * send the same attempt twice) and finished with the receiver's answer. `(execution_log_id, attempt)` keys it.
 */
export class Migration20261126500000WebhookAttempts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "webhook_attempts" (
      "id" uuid primary key,
      "customer_id" uuid not null references "customers" ("id") on update restrict on delete restrict,
      "execution_log_id" uuid not null references "execution_logs" ("id") on delete cascade,
      "attempt" int not null,
      "trigger" text not null,
      "waited_ms" int not null default 0,
      "created_at" timestamptz not null,
      "finished_at" timestamptz null,
      "http_status" int null,
      "duration_ms" int null,
      "error" text null,
      "response_body" text null,
      constraint "webhook_attempts_log_attempt_unique" unique ("execution_log_id", "attempt")
    );`);
    this.addSql(
      `create index "webhook_attempts_log_page_index" on "webhook_attempts" ("execution_log_id", "created_at", "id");`,
    );
    // A delivery becomes visible once it is settled, attempted or not (FAILED SUBSCRIPTION_DISABLED has no
    // attempt): the list's partial index follows the new condition.
    this.addSql(`drop index if exists "execution_logs_list_index";`);
    this.addSql(
      `create index "execution_logs_list_index" on "execution_logs" ("subscription_id", "created_at", "id") where "status" <> 'PENDING';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "execution_logs_list_index";`);
    this.addSql(
      `create index "execution_logs_list_index" on "execution_logs" ("subscription_id", "created_at", "id") where "attempts" > 0;`,
    );
    this.addSql(`drop table "webhook_attempts";`);
  }
}
