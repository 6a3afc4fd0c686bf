import { Migration } from '@mikro-orm/migrations';

// Webhook subscriptions and their execution logs (one row per delivery). Lists page by (customer, created_at, id);
// the fan-out reads a customer's live subscriptions; a log is listed under its subscription once attempted.
export class Migration20261123050000Webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "webhook_subscriptions" (
      "id" uuid not null primary key,
      "customer_id" uuid not null,
      "url" text not null,
      "include_all" boolean not null,
      "resources" jsonb not null,
      "allow_retry" boolean not null,
      "secret_encrypted" text not null,
      "previous_secret_encrypted" text null,
      "previous_secret_expires_at" timestamptz(3) null,
      "deleted_at" timestamptz(3) null,
      "created_at" timestamptz(3) not null,
      "updated_at" timestamptz(3) not null);`);
    this.addSql(`create index "webhook_subscriptions_list_index" on "webhook_subscriptions" ("customer_id", "created_at", "id");`);
    this.addSql(`create table "execution_logs" (
      "id" uuid not null primary key,
      "customer_id" uuid not null,
      "subscription_id" uuid not null references "webhook_subscriptions" ("id"),
      "event_id" uuid not null,
      "message_id" varchar(255) not null unique,
      "event_type" varchar(255) not null,
      "url" text not null,
      "payload" text not null,
      "http_status" int not null,
      "status" varchar(255) not null,
      "error" text null,
      "attempts" int not null,
      "created_at" timestamptz(3) not null,
      "updated_at" timestamptz(3) not null,
      unique ("event_id", "subscription_id"));`);
    this.addSql(`create index "execution_logs_list_index" on "execution_logs" ("subscription_id", "created_at", "id") where "attempts" > 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "execution_logs";`);
    this.addSql(`drop table "webhook_subscriptions";`);
  }
}
