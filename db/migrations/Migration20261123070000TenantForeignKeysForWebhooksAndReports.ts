import { Migration } from '@mikro-orm/migrations';

// The webhook and report tables arrived after the customer foreign keys (Migration20261123020000CustomerLifecycle):
// they get the same constraint, for the same reason (a customer is disabled, never deleted while it owns rows).
const TABLES = ['webhook_subscriptions', 'execution_logs', 'movements', 'movement_days'] as const;

export class Migration20261123070000TenantForeignKeysForWebhooksAndReports extends Migration {
  override async up(): Promise<void> {
    for (const table of TABLES) {
      this.addSql(
        `alter table "${table}" add constraint "${table}_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update restrict on delete restrict;`,
      );
    }
  }

  override async down(): Promise<void> {
    for (const table of TABLES) this.addSql(`alter table "${table}" drop constraint "${table}_customer_id_foreign";`);
  }
}
