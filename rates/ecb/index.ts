// The ECB connector (the EUR reference): the daily reference rates, against EUR.
import type { RatesConfig } from '../../config';
import type { RateConnector } from '../source';
import { fetchDailyXml } from './client';
import { translateDaily } from './translation';

export function ecbConnector(config: RatesConfig): RateConnector {
  return {
    name: 'ecb',
    covers: ['EUR'],
    async fetchLatest(_now, signal) {
      return translateDaily(await fetchDailyXml(config.ecb.url, signal));
    },
  };
}
