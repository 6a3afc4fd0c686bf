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
    // Hourly on every plan, but the FX market closes from Friday to Sunday evening (UTC), and whether OXR's instant
    // moves then is not written anywhere we could check: a weekend's 48 hours and some, so that a quiet weekend never
    // stops every quote, while a feed frozen for good is refused within about two days (decision 0297).
    maxSourceAgeSeconds: 54 * 3600,
    async fetchLatest(_now, signal) {
      return translateLatest(await fetchLatestJson({ url: config.oxr.url, appId }, signal));
    },
  };
}
