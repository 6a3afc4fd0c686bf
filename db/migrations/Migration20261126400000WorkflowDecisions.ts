import { Migration } from '@mikro-orm/migrations';

/**
 * Decisions reach workflows only as committed rows (decision 0068):
 * - `workflow_decisions`: one row per decision (an account or instruction review, a held withdrawal, a deposit
 *   replay), who made it (`actor`) and for which workflow. Append-only like the audit log: the workflow reads it
 *   back to act, so an edit after the fact would change what a replayed history means.
 * - `workflow_signals`: the outbox of signals, one per decision, committed with it and sent after COMMIT by the
 *   writer and, should it die, by the worker's relay (same lease and backoff columns as `workflow_starts`). `start`
 *   holds the workflow's start request when the decision may arrive before its workflow was started (signalWithStart).
 *   Its COMMIT wakes the same relay as an outbox start (the `cambio_workflow_starts` channel).
 */
export class Migration20261126400000WorkflowDecisions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "workflow_decisions" (
      "id" uuid not null,
      "workflow_id" varchar(255) not null,
      "kind" varchar(32) not null,
      "customer_id" uuid not null,
      "target" uuid not null,
      "decision" varchar(16) null,
      "reason" text null,
      "actor" varchar(255) not null,
      "created_at" timestamptz(3) not null,
      constraint "workflow_decisions_pkey" primary key ("id"),
      constraint "workflow_decisions_customer_id_foreign" foreign key ("customer_id") references "customers" ("id"));`);
    this.addSql(`create index "workflow_decisions_workflow_index" on "workflow_decisions" ("workflow_id");`);
    this.addSql(`
      create function "workflow_decisions_refuse_change"() returns trigger language plpgsql as $$
      begin
        raise exception 'workflow_decisions is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
      end $$;`);
    this.addSql(`create trigger "workflow_decisions_append_only" before update or delete on "workflow_decisions"
      for each row execute function "workflow_decisions_refuse_change"();`);
    this.addSql(`create table "workflow_signals" (
      "decision_id" uuid not null references "workflow_decisions" ("id"),
      "workflow_id" varchar(255) not null,
      "task_queue" varchar(255) not null,
      "start" jsonb null,
      "created_at" timestamptz(3) not null,
      "claimed_until" timestamptz null,
      "attempts" int not null default 0,
      "next_attempt_at" timestamptz not null default now(),
      constraint "workflow_signals_pkey" primary key ("decision_id"));`);
    this.addSql(`create index "workflow_signals_next_attempt_index" on "workflow_signals" ("next_attempt_at");`);
    this.addSql(`create trigger "workflow_signals_notify" after insert on "workflow_signals"
      for each row execute function "notify_workflow_start"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "workflow_signals";`);
    this.addSql(`drop table "workflow_decisions";`);
    this.addSql(`drop function "workflow_decisions_refuse_change"();`);
  }
}
