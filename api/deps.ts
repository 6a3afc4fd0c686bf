import { Client, Connection } from '@temporalio/client';
import pino, { Logger } from 'pino';
import { Config } from '../config';
import { openOrm, Orm } from '../db/orm';
import { sessionSettingsOf } from '../db/session-settings';
import { openRateLimitStore, RateLimitStore } from '../db/repositories/rate-limits';
import { RateSource, TableRateSource, DEFAULT_MID_RATES } from '../domain/rates';
import type { ResolveHost } from '../webhooks/url-policy';
import { railsFromConfig, type Rails } from '../rails';

/** Everything a service needs from the outside world, built once per process (API, CLI, tests). */
export interface Deps {
  config: Config;
  orm: Orm;
  temporal: Client;
  rates: RateSource;
  log: Logger;
  /** Name resolution for the webhook URL rules; DNS unless a test injects its own. */
  resolveHost?: ResolveHost;
  /** The shared per-customer rate counters (RATE_LIMIT_SCOPE=deployment); absent: a bucket per process. */
  rateLimits?: RateLimitStore;
  /** The rails' connectors: the deposit POST creates its PIX charge through `rails.pix` before it answers. */
  rails?: Rails;
  close(): Promise<void>;
}

export interface DepsOptions {
  log?: Logger;
  poolMax?: number;
  applicationName?: string;
  /**
   * Connect to Temporal on first use instead of checking it now: the operator CLI, whose commands that never call
   * Temporal (customers, reports, statements, the books) must run while it is down. The API checks it at start.
   */
  temporalOnFirstUse?: boolean;
}

export async function createDeps(config: Config, opts: DepsOptions = {}): Promise<Deps> {
  const log = opts.log ?? pino({ level: config.logLevel, base: { service: 'cambio-api' } });
  const orm = await openOrm(config.databaseUrl, {
    poolMax: opts.poolMax,
    session: sessionSettingsOf(config),
    applicationName: opts.applicationName ?? 'cambio-api',
  });
  const address = { address: config.temporalAddress };
  const connection = opts.temporalOnFirstUse ? Connection.lazy(address) : await Connection.connect(address);
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  const rateLimits =
    config.rateLimitScope === 'deployment'
      ? openRateLimitStore(config.databaseUrl, sessionSettingsOf(config))
      : undefined;
  const rails = railsFromConfig(config);
  return {
    config,
    orm,
    temporal,
    rates: new TableRateSource(DEFAULT_MID_RATES),
    log,
    rateLimits,
    rails,
    async close() {
      await rails.pix?.close();
      await connection.close();
      await rateLimits?.close();
      await orm.close(true);
    },
  };
}
