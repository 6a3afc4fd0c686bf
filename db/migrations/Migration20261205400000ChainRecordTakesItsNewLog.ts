import { Migration } from '@mikro-orm/migrations';

/** The facts trigger (Migration20261202400000TedPayers), `exception` checked first: the one rule both versions share. */
const factsFixed = (exception = '') => `create or replace function "inbound_payments_facts_fixed"()
    returns trigger language plpgsql as $$
      begin${exception}
        if (new.amount, new.asset, new.rail, new.end_to_end_id, new.operation_id, new.customer_id, new.account_id,
            new.remainder_of, new.created_at, new.payer) is distinct from (old.amount, old.asset, old.rail,
            old.end_to_end_id, old.operation_id, old.customer_id, old.account_id, old.remainder_of, old.created_at,
            old.payer) then
          raise exception 'the facts of inbound payment % never change (only its resolution does)', old.id;
        end if;
        return new;
      end $$;`;

/**
 * A chain transfer's record still PENDING or DROPPED (in no balance), seen again in another block, takes what that
 * block's log at its reference says (docs/decisions/0326): a log's index counts its whole block's logs, so a
 * transaction a reorganisation mined again after another has its logs shifted, and another of its logs (to another
 * deposit, of another amount) may sit at a recorded index. Its amount, asset, deposit, customer and account may
 * change then, and only then: with its block, from PENDING or DROPPED to PENDING. Every other record's facts stay
 * fixed, and so do every record's rail, reference, remainder, creation and payer.
 */
export class Migration20261205400000ChainRecordTakesItsNewLog extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      factsFixed(`
        if old.block_hash is not null and new.block_hash is distinct from old.block_hash
            and old.status in ('PENDING', 'DROPPED') and new.status = 'PENDING'
            and (new.rail, new.end_to_end_id, new.remainder_of, new.created_at, new.payer)
              is not distinct from (old.rail, old.end_to_end_id, old.remainder_of, old.created_at, old.payer) then
          return new;
        end if;`),
    );
  }

  override async down(): Promise<void> {
    this.addSql(factsFixed());
  }
}
