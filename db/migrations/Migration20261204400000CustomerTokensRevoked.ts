import { Migration } from '@mikro-orm/migrations';

/**
 * When a customer's tokens were last revoked (decision 0231): the moment of its last disable, kept after an enable,
 * so that a token issued before a disable never works again. Customers disabled now were revoked then.
 */
export class Migration20261204400000CustomerTokensRevoked extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "customers" add column "tokens_revoked_at" timestamptz(3) null;`);
    this.addSql(`update "customers" set "tokens_revoked_at" = "disabled_at" where "disabled_at" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "customers" drop column "tokens_revoked_at";`);
  }
}
