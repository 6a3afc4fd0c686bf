// The login of the application role (decision 0070): `npm run migrate` runs as the owner and lets the user of the
// application's DATABASE_URL act as `cambio_app`, so the API and the worker hold row rights only. Statements on a
// client of the owner's, outside any transaction.
import type { Client } from 'pg';

const ROLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** The user a database URL logs in as. */
export const userOf = (databaseUrl: string): string => decodeURIComponent(new URL(databaseUrl).username) || 'postgres';

/**
 * Makes the user of `applicationUrl` a member of `cambio_app`: created as a login role with the URL's password if it
 * does not exist yet (an existing role keeps its password and attributes), never a superuser or an owner.
 */
export async function grantApplicationLogin(owner: Client, applicationUrl: string): Promise<string> {
  const url = new URL(applicationUrl);
  const user = userOf(applicationUrl);
  if (!ROLE_NAME.test(user)) throw new Error(`unsupported application role name "${user}"`);
  const { rows } = await owner.query('select 1 from pg_roles where rolname = $1', [user]);
  if (!rows.length) {
    const password = decodeURIComponent(url.password);
    const { rows: sql } = await owner.query(
      password
        ? `select format('create role %I login password %L', $1::text, $2::text) as ddl`
        : `select format('create role %I login', $1::text) as ddl`,
      password ? [user, password] : [user],
    );
    try {
      await owner.query(sql[0].ddl);
    } catch (err) {
      // Created meanwhile by another migration of the same cluster.
      if ((err as { code?: string }).code !== '42710') throw err;
    }
  }
  const { rows: grant } = await owner.query(`select format('grant cambio_app to %I', $1::text) as ddl`, [user]);
  await owner.query(grant[0].ddl);
  return user;
}
