// The Open Exchange Rates connector (intraday, the usual primary): client.ts speaks HTTP, translation.ts reads the
// answer. Built only with an app id: without one, OXR is not configured (rates/index.ts).
import type { RatesConfig } from '../../config';
import type { RateConnector } from '../source';
import { fetchLatestJson } from './client';
import { translateLatest } from './translation';

export function oxrConnector(config: RatesConfig): RateConnector | undefined {
  const appId = config.oxr.appId;
  if (!appId) return undefined;
  return {
    name: 'oxr',
    covers: [],
    // Every plan moves `timestamp` at least hourly, weekends included: two missed updates and the next one's delay.
    maxSourceAgeSeconds: 3 * 3600,
    async fetchLatest(_now, signal) {
      return translateLatest(await fetchLatestJson({ url: config.oxr.url, appId }, signal));
    },
  };
}
