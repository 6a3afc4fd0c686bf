import { Migration } from '@mikro-orm/migrations';

/**
 * Client secret rotation (decision 0024): the secret a rotation replaced keeps working until
 * `previous_secret_expires_at` (CLIENT_SECRET_GRACE_SECONDS after the rotation), hashed like the current one. One
 * previous secret is kept: a second rotation within the grace period ends the oldest at once.
 */
export class Migration20261125200002ClientSecretRotation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "api_clients"
      add column "previous_secret_hash" varchar(255) null,
      add column "previous_secret_expires_at" timestamptz(3) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_clients"
      drop column "previous_secret_hash", drop column "previous_secret_expires_at";`);
  }
}
