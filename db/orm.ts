import { defineConfig, EntityManager, MikroORM, type Options } from '@mikro-orm/postgresql';
import path from 'node:path';
import { ALL_ENTITIES } from './entities';
import { pgClientOptions, SessionSettings } from './session-settings';
import { closeOnQueryTimeout } from './stalled-connection';

export type Orm = MikroORM;
export type Em = EntityManager;

export interface OrmOptions {
  poolMax?: number;
  /** How long a pooled connection may sit unused before it is closed (tarn's default, 30 s, when unset). */
  poolIdleTimeoutMs?: number;
  /** Session settings of every pooled connection (db/session-settings.ts); none for migrations. */
  session?: SessionSettings;
  /** Shown in pg_stat_activity, so an operator can tell the processes apart. */
  applicationName?: string;
  /**
   * MikroORM extensions: db/migrate.ts passes the Migrator. Only the migration step needs it, and it loads knex
   * and umzug, which the API, the worker and every CLI command would otherwise load at start for nothing.
   */
  extensions?: Options['extensions'];
}

export function ormConfig(databaseUrl: string, opts: OrmOptions = {}) {
  return defineConfig({
    clientUrl: databaseUrl,
    entities: ALL_ENTITIES,
    extensions: opts.extensions ?? [],
    // Under tsx (tests, development) migrations are the .ts files; compiled (dist/) they are the .js beside us.
    preferTs: __filename.endsWith('.ts'),
    discovery: { warnWhenNoEntities: true },
    forceUtcTimezone: true,
    // A request or activity forks its own EntityManager; the global one must never be used directly.
    allowGlobalContext: false,
    ...(opts.session ? { driverOptions: { connection: pgClientOptions(opts.session, opts.applicationName) } } : {}),
    pool: {
      min: 0,
      max: opts.poolMax ?? 20,
      ...(opts.poolIdleTimeoutMs ? { idleTimeoutMillis: opts.poolIdleTimeoutMs } : {}),
      ...(opts.session
        ? { acquireTimeoutMillis: opts.session.acquireTimeoutMs, afterCreate: closeOnQueryTimeout }
        : {}),
    },
    migrations: {
      path: path.join(__dirname, 'migrations'),
      pathTs: path.join(__dirname, 'migrations'),
      glob: '!(*.d).{js,ts}',
      transactional: true,
      snapshot: false,
    },
  });
}

/** The `tenant` filter's parameters (db/entities/common.ts): one customer, or the system scope. */
type TenantScope = { customerId?: string; system?: boolean };

export async function openOrm(databaseUrl: string, opts: OrmOptions = {}): Promise<Orm> {
  return MikroORM.init(ormConfig(databaseUrl, opts));
}

/** An EntityManager that sees one customer's rows only (the tenant filter). */
export function tenantEm(orm: Orm, customerId: string): Em {
  const em = orm.em.fork();
  em.setFilterParams('tenant', { customerId });
  return em;
}

/**
 * The customer an EntityManager is scoped to (tenantEm), for the few hot-path statements written as plain SQL
 * instead of through the entity layer: they take the tenant condition from here, never from the request.
 */
export function tenantOf(em: Em): string {
  const scope = em.getFilterParams<TenantScope>('tenant');
  if (!scope?.customerId) throw new Error('this statement runs in a customer scope only');
  return scope.customerId;
}

/**
 * `tenantOf` for a statement that also serves workers and operators: null in the system scope (every customer's
 * rows), the customer otherwise; no scope at all still throws.
 */
export function tenantOrSystem(em: Em): string | null {
  return em.getFilterParams<TenantScope>('tenant')?.system ? null : tenantOf(em);
}

/** An EntityManager for workers and operators, which act across customers on purpose. */
export function systemEm(orm: Orm): Em {
  const em = orm.em.fork();
  em.setFilterParams('tenant', { system: true });
  return em;
}
