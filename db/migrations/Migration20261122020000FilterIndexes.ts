import { Migration } from '@mikro-orm/migrations';

// Lists always return `total`, a count over the filtered set. With the status next to the customer in an index,
// the commonest filter (`currentState.status`) counts from the index instead of reading every row.
export class Migration20261122020000FilterIndexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "accounts_status_index" on "accounts" ("customer_id", "status");`);
    this.addSql(`create index "operations_status_index" on "operations" ("customer_id", "status");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "accounts_status_index";`);
    this.addSql(`drop index "operations_status_index";`);
  }
}
