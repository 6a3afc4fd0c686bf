import { Migration } from '@mikro-orm/migrations';

/**
 * The bytes a customer's onboarding documents take, read at each upload against its storage budget (decision 0350),
 * from an index that carries the sizes: an index-only scan of the customer's entries, never the table's rows or
 * their contents.
 */
export class Migration20261205530000DocumentBytesByCustomer extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index "account_documents_customer_bytes_index" on "account_documents" ("customer_id") include ("size_bytes");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "account_documents_customer_bytes_index";`);
  }
}
