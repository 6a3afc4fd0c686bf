import { Migration } from '@mikro-orm/migrations';

// Subscription health, recovery and the events API (decisions 0042, 0044):
// - subscriptions get a status and the failure tracking that auto-disables them (`failing_since`: the first failed
//   attempt after the last success; `failed_attempts`: how many since);
// - a delivery log says which attempt a workflow will make next (`next_attempt`, null when none is scheduled or
//   running: recover skips the others) and which attempt was last counted toward its subscription's health
//   (`health_attempt`, so a retried activity never counts one twice);
// - events keep their payload as `json`, which stores the text as given: the events API then returns exactly the
//   body the deliveries carried (jsonb would reorder the keys). The purge walks `created_at`
//   (the list uses the existing (customer_id, created_at) index).
export class Migration20261125100000WebhookRecovery extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_subscriptions"
      add column "status" varchar(16) not null default 'ACTIVE',
      add column "disabled_at" timestamptz(3) null,
      add column "disabled_reason" text null,
      add column "failing_since" timestamptz(3) null,
      add column "failed_attempts" int not null default 0;`);
    this.addSql(`alter table "execution_logs"
      add column "next_attempt" int null,
      add column "health_attempt" int not null default 0;`);
    this.addSql(`alter table "events" alter column "payload" type json using "payload"::text::json;`);
    this.addSql(`create index "events_created_at_index" on "events" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "events_created_at_index";`);
    this.addSql(`alter table "events" alter column "payload" type jsonb using "payload"::jsonb;`);
    this.addSql(`alter table "execution_logs" drop column "next_attempt", drop column "health_attempt";`);
    this.addSql(`alter table "webhook_subscriptions" drop column "status", drop column "disabled_at",
      drop column "disabled_reason", drop column "failing_since", drop column "failed_attempts";`);
  }
}
