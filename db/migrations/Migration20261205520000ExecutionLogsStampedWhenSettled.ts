import { Migration } from '@mikro-orm/migrations';

/**
 * An execution log's `created_at` is the moment it became visible, its first attempt settled (or its closing without
 * one), strictly after every log of its subscription settled before it (decision 0347), so a reader of the log list
 * from the top never finds a log below the ones it has already read.
 *
 * Before, `created_at` was the fan-out's clock, and a log is listed only once settled: a slow first attempt settled
 * behind a newer log that a reader had already read, and the older log appeared below it, where a reader from the top
 * stops. The product decisions say a log is "written when the first attempt ends": it is now stamped then.
 *
 * As the events' stamp (decision 0238): a deferred constraint trigger runs at COMMIT, takes a transaction advisory
 * lock per subscription (released once the commit is visible), and stamps the database's clock to the millisecond or
 * 1 ms after the subscription's newest visible log. It fires once per log, on the transition out of PENDING (or on an
 * insert already settled: a paused subscription's FAILED SUBSCRIPTION_DISABLED); its own update of `created_at`
 * matches neither condition. A PENDING log's `created_at` stays the fan-out's, which recover's skipped list reads.
 */
export class Migration20261205520000ExecutionLogsStampedWhenSettled extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create function "execution_logs_stamp_when_settled"() returns trigger language plpgsql as $$
      declare newest timestamptz;
      begin
        perform pg_advisory_xact_lock(hashtextextended('cambio:execution-logs:' || new.subscription_id::text, 0));
        select max(created_at) into newest from execution_logs
          where subscription_id = new.subscription_id and status <> 'PENDING' and id <> new.id;
        update execution_logs
          set created_at = greatest(date_trunc('milliseconds', clock_timestamp()), newest + interval '1 millisecond')
          where id = new.id;
        return null;
      end $$;`);
    this.addSql(`
      create constraint trigger "execution_logs_stamp_when_inserted_settled" after insert on "execution_logs"
      deferrable initially deferred for each row when (new.status <> 'PENDING')
      execute function "execution_logs_stamp_when_settled"();`);
    this.addSql(`
      create constraint trigger "execution_logs_stamp_when_settled" after update of "status" on "execution_logs"
      deferrable initially deferred for each row when (old.status = 'PENDING' and new.status <> 'PENDING')
      execute function "execution_logs_stamp_when_settled"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "execution_logs_stamp_when_settled" on "execution_logs";`);
    this.addSql(`drop trigger "execution_logs_stamp_when_inserted_settled" on "execution_logs";`);
    this.addSql(`drop function "execution_logs_stamp_when_settled"();`);
  }
}
