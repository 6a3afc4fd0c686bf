import { Migration } from '@mikro-orm/migrations';

/**
 * Whether the client's current secret has got a token yet (decision 0229): a rotation whose new secret nobody used
 * (the operator's command died before printing it, and was run again) replaces that secret and keeps the one the
 * customer runs on, instead of ending it at once. Existing secrets count as used: rotations keep their old behaviour.
 */
export class Migration20261204300000ClientSecretUsed extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "api_clients" add column "secret_used_at" timestamptz(3) null;`);
    this.addSql(`update "api_clients" set "secret_used_at" = now();`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_clients" drop column "secret_used_at";`);
  }
}
