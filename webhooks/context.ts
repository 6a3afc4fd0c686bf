import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { ResolveHost } from './url-policy';

/**
 * What the webhook services need from the process they run in. The API's and the CLI's service context has all of
 * it; naming only this keeps webhooks/ from importing the API layer.
 */
export interface WebhookContext {
  config: Config;
  temporal: Client;
  /** Name resolution for the URL rules; DNS unless a test injects its own. */
  resolveHost?: ResolveHost;
}
