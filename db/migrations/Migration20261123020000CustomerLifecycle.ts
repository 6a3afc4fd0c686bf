import { Migration } from '@mikro-orm/migrations';

/** Every table that holds a customer's rows (a `customer_id` column). A new tenant table needs its own FK. */
const TENANT_TABLES = [
  'accounts',
  'account_documents',
  'api_clients',
  'balances',
  'beneficiaries',
  'events',
  'idempotency_keys',
  'inbound_payments',
  'operations',
  'payment_instructions',
  'quotes',
  'ubos',
] as const;

// A customer is disabled, never deleted while it owns anything: `disabled_at` stops its tokens, and foreign keys
// from every tenant table make Postgres refuse to delete a customer with rows (or to write a row for a customer
// that does not exist). Rows already pointing at a missing customer keep their data: the migration restores
// that customer as a disabled placeholder rather than dropping money records or failing.
export class Migration20261123020000CustomerLifecycle extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "customers" add column "disabled_at" timestamptz(3) null;`);
    const owners = TENANT_TABLES.map((t) => `select customer_id from "${t}"`).join(' union ');
    this.addSql(
      `insert into "customers" ("id", "name", "created_at", "disabled_at")
       select o.customer_id, 'unknown customer (restored by migration)', now(), now()
       from (${owners}) o
       where not exists (select 1 from "customers" c where c.id = o.customer_id);`,
    );
    for (const table of TENANT_TABLES) {
      // ON DELETE RESTRICT: deleting a customer that still owns rows is an error, not a cascade through money.
      this.addSql(
        `alter table "${table}" add constraint "${table}_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update restrict on delete restrict;`,
      );
    }
  }

  override async down(): Promise<void> {
    for (const table of TENANT_TABLES) this.addSql(`alter table "${table}" drop constraint "${table}_customer_id_foreign";`);
    this.addSql(`alter table "customers" drop column "disabled_at";`);
  }
}
