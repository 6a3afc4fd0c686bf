import { Migrator } from '@mikro-orm/migrations';
import { Client } from 'pg';
import { openOrm } from './orm';
import { grantApplicationLogin, userOf } from './application-role';

/** Creates the database named in the URL when it does not exist yet (a fresh machine has none). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unsupported database name "${name}"`);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } catch (err) {
        // Two processes starting at once: the loser sees duplicate_database and carries on.
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  } finally {
    await client.end();
  }
}

/**
 * Applies the migrations as the owner of `databaseUrl`. With `applicationUrl` (a login other than the owner), that
 * login is then made a member of the application role (db/application-role.ts).
 */
export async function migrate(databaseUrl: string, opts: { applicationUrl?: string } = {}): Promise<string[]> {
  await ensureDatabase(databaseUrl);
  // Several processes may migrate at once (one per replica at deploy time): a session advisory lock on a
  // connection of its own lets one apply the migrations while the others wait, then find nothing left to do.
  const lock = new Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query(`select pg_advisory_lock(hashtext('cambio:migrate'))`);
    const orm = await openOrm(databaseUrl, { poolMax: 2, extensions: [Migrator] });
    try {
      const applied = await orm.getMigrator().up();
      if (opts.applicationUrl && userOf(opts.applicationUrl) !== userOf(databaseUrl)) {
        await grantApplicationLogin(lock, opts.applicationUrl);
      }
      return applied.map((m) => m.name);
    } finally {
      await orm.close(true);
    }
  } finally {
    await lock.end(); // ends the session, which releases the lock
  }
}

if (require.main === module) {
  // The owner migrates: MIGRATION_DATABASE_URL, else DATABASE_URL (one role for everything, as in development).
  // With both, DATABASE_URL is the application's login, made a member of cambio_app.
  const app = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/cambio';
  const url = process.env.MIGRATION_DATABASE_URL || app;
  migrate(url, { applicationUrl: process.env.MIGRATION_DATABASE_URL ? app : undefined })
    .then((names) => {
      console.log(names.length ? `migrated: ${names.join(', ')}` : 'database is up to date');
    })
    .catch((err) => {
      console.error(`migration failed for ${url.replace(/\/\/[^@]*@/, '//***@')}:`, err);
      process.exit(1);
    });
}
