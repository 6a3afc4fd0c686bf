import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Orm } from '../db/orm';
import type { RateBook } from '../domain/rates';
import type { Rails } from '../rails';
import type { ResolveHost } from '../webhooks/url-policy';

/** What activities may touch. Each activity forks its own EntityManager from `orm`. */
export interface ActivityDeps {
  config: Config;
  orm: Orm;
  rates: RateBook;
  temporal: Client;
  /** Name resolution for the webhook URL rules; DNS unless a test injects its own. */
  resolveHost?: ResolveHost;
  /** The rails' connectors; built from the config when absent. */
  rails?: Rails;
}
