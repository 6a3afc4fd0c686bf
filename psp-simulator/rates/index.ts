import type { SimulatedProvider } from '../provider';
import { rateSourceRoutes } from './walk';

// The sandbox's exchange-rate sources (walk.ts) as one of the simulator's providers: public GETs (no token), so
// sandbox quotes move as in production. `RATES_SOURCES=table npm start` chooses the fixed table instead.

export { RateWalk, rateSourceRoutes } from './walk';

export const ratesProvider: SimulatedProvider = {
  name: 'rates',
  chosenBy: 'RATES_SOURCES',
  settings: (base) => ({
    RATES_SOURCES: 'oxr,ptax,ecb',
    OXR_URL: base,
    OXR_APP_ID: 'sandbox',
    PTAX_URL: base,
    ECB_URL: `${base}/stats/eurofxref/eurofxref-daily.xml`,
  }),
  startLine: (base) =>
    `Exchange rates: oxr, ptax and ecb simulated at ${base} (RATES_SOURCES=table for the fixed table)`,
  // The CLI runs in another terminal without the sources the API and the worker were given: without them
  // `cambio rates` shows the sandbox table, not the rates quotes use (decision 0270).
  hint: (sources) =>
    `\`cambio rates\` shows the rates quotes use when the CLI has RATES_SOURCES=${sources}` +
    (sources.split(',').includes('oxr') ? ' and the OXR_APP_ID of the API (the simulator takes sandbox).' : '.'),
  mount: () => ({ middleware: rateSourceRoutes() }),
};
