import { Migration } from '@mikro-orm/migrations';

/**
 * An event's `created_at` is the moment its transaction commits, strictly after every event of its customer that
 * committed before it (decision 0238), so a client paging or polling `GET /api/events` oldest first never finds an
 * event behind the position it has already passed.
 *
 * Before, `created_at` was the application's clock when the event was written, inside a transaction that could commit
 * later: a newer event committed meanwhile was read, the poller moved past it, and the older one never showed.
 *
 * - A deferred constraint trigger runs at COMMIT, after every other statement of the transaction. It takes a
 *   transaction advisory lock per customer, so the customer's event-writing commits stamp one after the other; the
 *   lock is released only after the commit is visible, so whoever stamps next sees every event stamped before.
 * - The stamp is the database's clock to the millisecond (the precision of the column and of the cursors, decision
 *   0203), or 1 ms after the customer's newest event when that is later (two commits in one millisecond, a clock
 *   step back): never a tie a cursor would skip.
 */
export class Migration20261205100000EventsStampedAtCommit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create function "events_stamp_at_commit"() returns trigger language plpgsql as $$
      declare newest timestamptz;
      begin
        perform pg_advisory_xact_lock(hashtextextended('cambio:events:' || new.customer_id::text, 0));
        select max(created_at) into newest from events where customer_id = new.customer_id and id <> new.id;
        update events
          set created_at = greatest(date_trunc('milliseconds', clock_timestamp()), newest + interval '1 millisecond')
          where id = new.id;
        return null;
      end $$;`);
    this.addSql(`
      create constraint trigger "events_stamp_at_commit" after insert on "events"
      deferrable initially deferred for each row execute function "events_stamp_at_commit"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "events_stamp_at_commit" on "events";`);
    this.addSql(`drop function "events_stamp_at_commit"();`);
  }
}
