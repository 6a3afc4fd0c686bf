import type * as TemporalClientModule from '@temporalio/client';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { Config } from '../config';
import { openOrm, Orm } from '../db/orm';
import { sessionSettingsOf } from '../db/session-settings';
import { openRateLimitStore, RateLimitStore } from '../db/repositories/rate-limits';
import { DatabaseProbe, openDatabaseProbe } from '../db/repositories/readiness-and-metrics';
import type { RateBook } from '../domain/rates';
import { rateBookFromConfig } from '../rates';
import { noteRatesDeviation } from './metrics';
import type { ResolveHost } from '../webhooks/url-policy';
import type * as RailsModule from '../rails';
import type { Rails } from '../rails';

/** Everything a service needs from the outside world, built once per process (API, CLI, tests). */
export interface Deps {
  config: Config;
  orm: Orm;
  temporal: Client;
  /** What quotes price from (rates/index.ts): the sandbox's table, the live rates, or none outside a sandbox. */
  rates: RateBook;
  /** Why quotes between currencies are refused in this deployment (no usable source): the API logs it at start. */
  ratesWarning?: string;
  log: Logger;
  /** Name resolution for the webhook URL rules; DNS unless a test injects its own. */
  resolveHost?: ResolveHost;
  /** The shared per-customer rate counters (RATE_LIMIT_SCOPE=deployment); absent: a bucket per process. */
  rateLimits?: RateLimitStore;
  /** The rails' connectors: the deposit POST creates its rail's charge through them before it answers. */
  rails?: Rails;
  /** /readyz's Postgres probe, on a connection of its own (built on first read: only the API reads it). */
  databaseProbe: DatabaseProbe;
  close(): Promise<void>;
}

export interface DepsOptions {
  /** The process's logger: the API's (api/main.ts, from its first line), the CLI's, a test's. */
  log: Logger;
  poolMax?: number;
  /** See OrmOptions: the test stack's, so three test runs on one Postgres do not hold each other's idle slots. */
  poolIdleTimeoutMs?: number;
  applicationName?: string;
  /**
   * Build the Temporal client and the rails' connectors on their first read instead of here, loading their modules
   * then: the CLI's, whose commands mostly need neither (about 0.25 s of its start, decision 0295). The API and the
   * tests build them here, as a process serving requests should.
   */
  onFirstUse?: boolean;
  /**
   * How long the Temporal client tries to connect before a call fails (the SDK's default, 10 s, when unset): the CLI
   * sets less, so an operator learns that Temporal is down in seconds, not ten (decision 0296).
   */
  temporalConnectTimeoutMs?: number;
}

/** A value built once, when first asked for; `built` tells whether it was, for closing only what exists. */
function once<T>(build: () => T): { get: () => T; built: () => T | undefined } {
  let value: T | undefined;
  return { get: () => (value ??= build()), built: () => value };
}

// Required, not imported, so that a process that never reads `temporal` or `rails` never loads them: @temporalio/client
// (protobufjs) and the rails' registry (viem, the boleto client, undici) are most of the CLI's start (decision 0295).
/* eslint-disable @typescript-eslint/no-require-imports -- a synchronous load on first read, typed by `import type` */
const temporalClientModule = () => require('@temporalio/client') as typeof TemporalClientModule;
const railsModule = () => require('../rails') as typeof RailsModule;
/* eslint-enable @typescript-eslint/no-require-imports */

export async function createDeps(config: Config, opts: DepsOptions): Promise<Deps> {
  const orm = await openOrm(config.databaseUrl, {
    poolMax: opts.poolMax,
    poolIdleTimeoutMs: opts.poolIdleTimeoutMs,
    session: sessionSettingsOf(config),
    applicationName: opts.applicationName ?? 'cambio-api',
  });
  // Connected on first use, not checked here: a process started while Temporal is down still starts. The API then
  // answers as it does when Temporal goes down under it (operations accepted into the outbox, 503 where a request
  // needs Temporal, /readyz 503) and needs no restart once it answers; the CLI runs its commands that never call it.
  const temporal = once(() => {
    const { Client, Connection } = temporalClientModule();
    const connection = Connection.lazy({
      address: config.temporalAddress,
      ...(opts.temporalConnectTimeoutMs ? { connectTimeout: opts.temporalConnectTimeoutMs } : {}),
    });
    return new Client({ connection, namespace: config.temporalNamespace });
  });
  const rateLimits =
    config.rateLimitScope === 'deployment'
      ? openRateLimitStore(config.databaseUrl, sessionSettingsOf(config))
      : undefined;
  const rails = once(() => railsModule().railsFromConfig(config));
  const databaseProbe = once(() => openDatabaseProbe(config.databaseUrl, sessionSettingsOf(config)));
  if (!opts.onFirstUse) {
    temporal.get();
    rails.get();
  }
  const rates = rateBookFromConfig(config, orm, opts.log, { onDeviation: noteRatesDeviation });
  return {
    config,
    orm,
    // Getters, so that spreading the deps (`{ ...deps, signingKey }`) builds them: only the CLI keeps them unread.
    get temporal() {
      return temporal.get();
    },
    rates: rates.book,
    ratesWarning: rates.warning,
    log: opts.log,
    rateLimits,
    get rails() {
      return rails.get();
    },
    get databaseProbe() {
      return databaseProbe.get();
    },
    async close() {
      await databaseProbe.built()?.close();
      await rails.built()?.close();
      await temporal.built()?.connection.close();
      await rateLimits?.close();
      await orm.close(true);
    },
  };
}
