import { Migration } from '@mikro-orm/migrations';

// The suspense account of a customer (or of the platform, for payments with no customer): a fixed id derived from
// the owner, the same as domain/postings.ts computes (md5 of `suspense:<customerId>` or `suspense:platform`).
const SUSPENSE_OF_CUSTOMER = (col: string) => `md5('suspense:' || ${col}::text)::uuid`;
const PLATFORM_SUSPENSE = `md5('suspense:platform')::uuid`;

/**
 * Puts rows written before this migration in their true state (decision 0076). Exported so that a test can run it
 * over rows shaped as the old code left them; every statement is idempotent.
 *
 * 1. Every reported payment has its arrival in its suspense (`inbound:<id>:receive`): rows recorded before the
 *    suspense existed never had one, so the suspense was short by exactly the payments of deposits that never
 *    completed.
 * 2. Deposits completed before the suspense existed settled straight from the rail's world book: their payments
 *    are matched oldest first up to the quote (an excess is split off as an UNMATCHED remainder, a payment that
 *    came after the quote was covered is UNMATCHED whole), and one posting (`<op>:legacy-match`) takes the
 *    matched amount out of the suspense, as a deposit settled today does.
 * 3. A payment counted toward a deposit that FAILED and can no longer be replayed (expired, or failed longer ago
 *    than the replay window as this process is configured) is UNMATCHED: nothing will ever credit it.
 * 4. The suspense balance rows are what their entries say.
 */
export function legacyPaymentRepair(replayWindowSeconds: number): string[] {
  const receive = `'inbound:' || p.id::text || ':receive'`;
  const world = `'world:' || lower(p.rail)`;
  const legacyDeposit = `o.type = 'DEPOSIT' and o.status = 'COMPLETED'
    and exists (select 1 from ledger_transactions s where s.key = o.id::text || ':settle')
    and not exists (select 1 from ledger_transactions s join ledger_entries e on e.transaction_id = s.id
      where s.key = o.id::text || ':settle' and e.account_id = ${SUSPENSE_OF_CUSTOMER('o.customer_id')})
    and not exists (select 1 from ledger_transactions s where s.key = o.id::text || ':legacy-match')`;
  return [
    // 1. The arrival of every reported payment.
    `with todo as (
       select p.id, p.rail, p.asset, p.amount, p.customer_id from inbound_payments p
       where p.remainder_of is null and not exists (select 1 from ledger_transactions t where t.key = ${receive})),
     tx as (
       insert into ledger_transactions (id, key, operation_id, description, created_at)
       select gen_random_uuid(), 'inbound:' || todo.id::text || ':receive', null,
         'inbound payment received (recorded by migration)', now() from todo
       returning id, key)
     insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at)
     select gen_random_uuid(), tx.id, leg.account_id, leg.book, p.asset, leg.amount, now()
     from tx join todo p on tx.key = ${receive}
     cross join lateral (values
       (null::uuid, ${world}, -p.amount),
       (coalesce(${SUSPENSE_OF_CUSTOMER('p.customer_id')}, ${PLATFORM_SUSPENSE}), 'available', p.amount)
     ) leg (account_id, book, amount)`,
    // 2. Deposits settled from the world book: allocate their payments, oldest first, up to the quote.
    `create temporary table legacy_allocation on commit drop as
     select p.id, p.amount, o.id as operation_id,
       least(p.amount, greatest(o.source_amount - (sum(p.amount) over (partition by o.id
         order by p.created_at, p.id) - p.amount), 0)) as used
     from inbound_payments p join operations o on o.id = p.operation_id
     where p.status = 'MATCHED' and p.remainder_of is null and p.asset = o.source_asset and ${legacyDeposit}`,
    `update inbound_payments p set status = 'UNMATCHED', updated_at = now()
     from legacy_allocation a where a.id = p.id and a.used = 0`,
    `update inbound_payments p set matched_amount = a.used, updated_at = now()
     from legacy_allocation a where a.id = p.id and a.used > 0 and a.used < a.amount`,
    `insert into inbound_payments (id, operation_id, customer_id, account_id, amount, asset, rail, end_to_end_id,
       status, remainder_of, created_at, updated_at)
     select gen_random_uuid(), p.operation_id, p.customer_id, p.account_id, a.amount - a.used, p.asset, p.rail,
       p.end_to_end_id, 'UNMATCHED', p.id, now(), now()
     from legacy_allocation a join inbound_payments p on p.id = a.id where a.used > 0 and a.used < a.amount`,
    `with legacy as (
       select o.id, o.customer_id, o.source_asset, o.source_amount,
         'world:' || lower(coalesce(o.intent->'fundingInstruction'->>'rail', 'PIX_KEY')) as world
       from operations o where ${legacyDeposit}
         and exists (select 1 from legacy_allocation a where a.operation_id = o.id)),
     tx as (
       insert into ledger_transactions (id, key, operation_id, description, created_at)
       select gen_random_uuid(), legacy.id::text || ':legacy-match', legacy.id,
         'DEPOSIT settlement taken from the suspense (recorded by migration)', now() from legacy
       returning id, operation_id)
     insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at)
     select gen_random_uuid(), tx.id, leg.account_id, leg.book, l.source_asset, leg.amount, now()
     from tx join legacy l on l.id = tx.operation_id
     cross join lateral (values
       (${SUSPENSE_OF_CUSTOMER('l.customer_id')}, 'available', -l.source_amount),
       (null::uuid, l.world, l.source_amount)
     ) leg (account_id, book, amount)`,
    // 3. Counted toward a deposit that will never be credited.
    `update inbound_payments p set status = 'UNMATCHED', matched_amount = null, updated_at = now()
     from operations o where o.id = p.operation_id and p.status = 'MATCHED' and o.status = 'FAILED'
       and (o.states->-1->'reason'->>'code' = 'DEPOSIT_EXPIRED'
         or o.updated_at < now() - make_interval(secs => ${Number(replayWindowSeconds)}))`,
    // 4. Suspense balance rows from their entries.
    `insert into balances (account_id, asset, customer_id, available, held, updated_at)
     select e.account_id, e.asset, c.id, sum(e.amount), 0, now()
     from ledger_entries e left join customers c on ${SUSPENSE_OF_CUSTOMER('c.id')} = e.account_id
     where e.account_id in (select ${SUSPENSE_OF_CUSTOMER('id')} from customers union select ${PLATFORM_SUSPENSE})
     group by e.account_id, e.asset, c.id
     on conflict (account_id, asset) do update set available = excluded.available, updated_at = now()`,
  ];
}

/**
 * Inbound payments: the facts of a payment and its resolution apart, states for what is not decided yet, one record per
 * rail reference system-wide, the suspense a ledger account (decision 0076).
 *
 * - Facts (`amount` as received, `asset`, `rail`, `end_to_end_id`, `operation_id` the deposit it arrived for,
 *   `customer_id`, `account_id`, `remainder_of`, `created_at`) never change: a trigger refuses it. The resolution
 *   lives in its own columns: `matched_amount` (what its deposit used, when less than received),
 *   `credit_operation_id` / `credit_account_id` (an operator's credit), the return's fields.
 * - Old rows: a split had overwritten the matched record's amount (restored: amount = used + the remainders); an
 *   operator credit had overwritten `operation_id` and `account_id` (moved to the credit's columns; the deposit
 *   it arrived for is restored where the row is a remainder, and is unknown, null, otherwise).
 * - `status` gains RECEIVED (recorded, not decided yet: what `decided = false` meant) and RETURNING (a return in
 *   flight); `decided` goes.
 * - One record per rail reference across customers: (`rail`, `end_to_end_id`) unique. Two customers' records of
 *   one reference cannot be merged by a migration (both may have been credited); the migration stops and names
 *   them for an operator instead.
 * - `customer_id` may be null: a payment nobody could attribute (the platform's suspense). `balances.customer_id`
 *   likewise, for the platform's suspense balance.
 * - The suspense moves from the system books `suspense:<customerId>` to a ledger account per customer (and one for
 *   the platform) with balance rows, `available` holding it; then `legacyPaymentRepair`.
 */
export class Migration20261126300000InboundPaymentFacts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`do $$
      declare dup text;
      begin
        select string_agg(rail || ' ' || end_to_end_id, ', ') into dup from (
          select rail, end_to_end_id from inbound_payments where remainder_of is null
          group by rail, end_to_end_id having count(*) > 1) d;
        if dup is not null then
          raise exception 'inbound payments recorded twice under one rail reference (resolve them first): %', dup;
        end if;
      end $$;`);
    this.addSql(`alter table "inbound_payments"
      add column "matched_amount" numeric(38,6) null,
      add column "credit_operation_id" uuid null,
      add column "credit_account_id" uuid null,
      add column "return_failure" text null,
      alter column "customer_id" drop not null;`);
    this.addSql(`alter table "balances" alter column "customer_id" drop not null;`);
    // An operator's credit is a resolution, not the deposit the payment arrived for.
    this.addSql(`update "inbound_payments" set "credit_operation_id" = "operation_id",
      "credit_account_id" = "account_id", "operation_id" = null, "account_id" = null where "status" = 'CREDITED';`);
    this.addSql(`update "inbound_payments" p set "operation_id" = parent."operation_id",
      "account_id" = parent."account_id"
      from "inbound_payments" parent where p."status" = 'CREDITED' and p."remainder_of" = parent."id";`);
    // A split overwrote the amount received with the part used.
    this.addSql(`update "inbound_payments" p
      set "matched_amount" = case when p."status" = 'MATCHED' then p."amount" end, "amount" = p."amount" + r.excess
      from (select "remainder_of", sum("amount") as excess from "inbound_payments"
            where "remainder_of" is not null group by "remainder_of") r
      where r."remainder_of" = p."id";`);
    this.addSql(`alter table "inbound_payments" drop constraint "inbound_payments_status_check";`);
    this.addSql(`update "inbound_payments" set "status" = 'RECEIVED' where not "decided";`);
    this.addSql(`drop index "inbound_payments_undecided_index";`);
    this.addSql(`alter table "inbound_payments" drop column "decided";`);
    this.addSql(`alter table "inbound_payments" add constraint "inbound_payments_status_check"
      check ("status" in ('RECEIVED', 'MATCHED', 'UNMATCHED', 'RETURNING', 'RETURNED', 'CREDITED'));`);
    // The sweep looks for what nobody decided; there are few, so a partial index keeps it cheap.
    this.addSql(`create index "inbound_payments_received_index"
      on "inbound_payments" ("created_at", "id") where "status" = 'RECEIVED';`);
    this.addSql(`drop index "inbound_payments_reference_unique";`);
    this.addSql(`create unique index "inbound_payments_reference_unique"
      on "inbound_payments" ("rail", "end_to_end_id") where "remainder_of" is null;`);
    this.addSql(`update "ledger_entries" set "account_id" = md5('suspense:' || substr("book", 10))::uuid,
      "book" = 'available' where "book" like 'suspense:%';`);
    for (const statement of legacyPaymentRepair(replayWindow())) this.addSql(statement + ';');
    this.addSql(`create function "inbound_payments_facts_fixed"() returns trigger language plpgsql as $$
      begin
        if (new.amount, new.asset, new.rail, new.end_to_end_id, new.operation_id, new.customer_id, new.account_id,
            new.remainder_of, new.created_at) is distinct from (old.amount, old.asset, old.rail, old.end_to_end_id,
            old.operation_id, old.customer_id, old.account_id, old.remainder_of, old.created_at) then
          raise exception 'the facts of inbound payment % never change (only its resolution does)', old.id;
        end if;
        return new;
      end $$;`);
    this.addSql(`create trigger "inbound_payments_facts_fixed" before update on "inbound_payments"
      for each row execute function "inbound_payments_facts_fixed"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "inbound_payments_facts_fixed" on "inbound_payments";`);
    this.addSql(`drop function "inbound_payments_facts_fixed"();`);
    this.addSql(`update "ledger_entries" e set "account_id" = null, "book" = 'suspense:' || c."id"::text
      from "customers" c where e."account_id" = md5('suspense:' || c."id"::text)::uuid;`);
    this.addSql(`delete from "balances" where "account_id" in (select md5('suspense:' || "id"::text)::uuid
      from "customers" union select ${PLATFORM_SUSPENSE});`);
    this.addSql(`drop index "inbound_payments_reference_unique";`);
    this.addSql(`create unique index "inbound_payments_reference_unique"
      on "inbound_payments" ("customer_id", "end_to_end_id") where "remainder_of" is null;`);
    this.addSql(`drop index "inbound_payments_received_index";`);
    this.addSql(`alter table "inbound_payments" drop constraint "inbound_payments_status_check";`);
    this.addSql(`alter table "inbound_payments" add column "decided" boolean not null default true;`);
    this.addSql(`update "inbound_payments" set "decided" = false, "status" = 'UNMATCHED' where "status" = 'RECEIVED';`);
    this.addSql(`update "inbound_payments" set "status" = 'UNMATCHED' where "status" = 'RETURNING';`);
    this.addSql(`alter table "inbound_payments" alter column "decided" set default false;`);
    this.addSql(`create index "inbound_payments_undecided_index" on "inbound_payments" ("created_at") where not "decided";`);
    this.addSql(`alter table "inbound_payments" add constraint "inbound_payments_status_check"
      check ("status" in ('MATCHED', 'UNMATCHED', 'RETURNED', 'CREDITED'));`);
    this.addSql(`update "inbound_payments" set "amount" = "matched_amount" where "matched_amount" is not null;`);
    this.addSql(`update "inbound_payments" set "operation_id" = "credit_operation_id",
      "account_id" = "credit_account_id" where "status" = 'CREDITED';`);
    this.addSql(`alter table "inbound_payments" drop column "matched_amount", drop column "credit_operation_id",
      drop column "credit_account_id", drop column "return_failure";`);
  }
}

/** The replay window the deployment runs with (config/index.ts reads the same variable, same default). */
function replayWindow(): number {
  const value = Number(process.env.REPLAY_WINDOW_SECONDS ?? 604800);
  return Number.isFinite(value) && value > 0 ? value : 604800;
}
