// The ECB connector (a reference for every currency Cambio quotes): the daily reference rates, against EUR.
import type { RatesConfig } from '../../config';
import { FIAT_ASSETS } from '../../domain/assets';
import type { RateConnector } from '../source';
import { fetchDailyXml } from './client';
import { translateDaily } from './translation';

export function ecbConnector(config: RatesConfig): RateConnector {
  return {
    name: 'ecb',
    // Its file fixes every fiat Cambio quotes (EUR, the base, and USD, its first rate, included): a primary far off
    // any of them, MXN 1000 times over or a USD coin far off 1, must not price a quote (decision 0193).
    covers: FIAT_ASSETS,
    // TARGET days only: Easter leaves Thursday's fixing the latest until Tuesday about 16:00, 5 days.
    maxSourceAgeSeconds: 6 * 86_400,
    async fetchLatest(_now, signal) {
      return translateDaily(await fetchDailyXml(config.ecb.url, signal));
    },
  };
}
