import { Migration } from '@mikro-orm/migrations';

/**
 * TED credits read from the collection account (../shared/spec/decisions.md, "TED from the customer's own bank
 * account"):
 * - `inbound_payments.payer`: who sent it, as the bank's record shows (tax id, person type, bank, branch, account),
 *   for operators to see; a fact like the amount, so the facts trigger now keeps it too.
 * - an index for the match of a credit to the oldest open TED deposit of its payer's CNPJ
 *   (db/repositories/payer-deposits.ts).
 */
export class Migration20261202400000TedPayers extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "inbound_payments" add column "payer" jsonb null;`);
    this.addSql(`create or replace function "inbound_payments_facts_fixed"() returns trigger language plpgsql as $$
      begin
        if (new.amount, new.asset, new.rail, new.end_to_end_id, new.operation_id, new.customer_id, new.account_id,
            new.remainder_of, new.created_at, new.payer) is distinct from (old.amount, old.asset, old.rail,
            old.end_to_end_id, old.operation_id, old.customer_id, old.account_id, old.remainder_of, old.created_at,
            old.payer) then
          raise exception 'the facts of inbound payment % never change (only its resolution does)', old.id;
        end if;
        return new;
      end $$;`);
    this.addSql(`create index "operations_open_ted_deposit_payer_index" on "operations"
      ((("intent" -> 'fundingInstruction' ->> 'payerTaxId')), "created_at")
      where "type" = 'DEPOSIT' and "status" = 'REQUESTED' and ("intent" -> 'fundingInstruction' ->> 'rail') = 'TED';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "operations_open_ted_deposit_payer_index";`);
    this.addSql(`create or replace function "inbound_payments_facts_fixed"() returns trigger language plpgsql as $$
      begin
        if (new.amount, new.asset, new.rail, new.end_to_end_id, new.operation_id, new.customer_id, new.account_id,
            new.remainder_of, new.created_at) is distinct from (old.amount, old.asset, old.rail, old.end_to_end_id,
            old.operation_id, old.customer_id, old.account_id, old.remainder_of, old.created_at) then
          raise exception 'the facts of inbound payment % never change (only its resolution does)', old.id;
        end if;
        return new;
      end $$;`);
    this.addSql(`alter table "inbound_payments" drop column "payer";`);
  }
}
