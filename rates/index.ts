// The one list of rate sources (rates/README.md): which connectors RATES_SOURCES names, and the book quotes read.
import type { Logger } from 'pino';
import type { Config, RateSourceName } from '../config';
import { ASSETS } from '../domain/assets';
import { DEFAULT_MID_RATES, type RateBook, TableRateSource } from '../domain/rates';
import type { Orm } from '../db/orm';
import { latestExchangeRates, ratesClock } from '../db/repositories/exchange-rates';
import { systemEm } from '../db/orm';
import { type BookEvents, LiveRateBook, NoRates } from './book';
import { ecbConnector } from './ecb';
import { oxrConnector } from './oxr';
import { ptaxConnector } from './ptax';
import type { RateConnector } from './source';

/** The connector of a polled source, or undefined when it is not configured (OXR without OXR_APP_ID). */
function connectorOf(name: RateSourceName, config: Config): RateConnector | undefined {
  switch (name) {
    case 'oxr':
      return oxrConnector(config.rates);
    case 'ptax':
      return ptaxConnector(config.rates);
    case 'ecb':
      return ecbConnector(config.rates);
    case 'table':
      return undefined;
  }
}

/** The sources the poll reads (RATES_SOURCES less the table and less a source without its credentials). */
export function rateConnectorsFromConfig(config: Config): RateConnector[] {
  return config.rates.sources.map((n) => connectorOf(n, config)).filter((c): c is RateConnector => c !== undefined);
}

/**
 * What prices quotes in this deployment (../shared/spec/decisions.md, "Live exchange rates"):
 * - a polled primary (`oxr`, `ptax`, `ecb`) that is configured: the live book, the others its references;
 * - the table, when asked for or when nothing is configured, in a sandbox only;
 * - outside a sandbox with no usable primary: NoRates, with `warning` saying why (the process logs it at start).
 */
export function rateBookFromConfig(
  config: Config,
  orm: Orm,
  log: Logger,
  events: BookEvents = {},
  /** This process's clock (a test gives one that is off, as a host's may be). */
  now: () => number = Date.now,
): { book: RateBook; warning?: string } {
  const [primary, ...references] = config.rates.sources;
  const retryAfterSeconds = config.rates.pollSeconds;
  const connector = primary === undefined ? undefined : connectorOf(primary, config);
  if (!connector) {
    const why =
      primary === undefined
        ? 'RATES_SOURCES is not set'
        : primary === 'oxr'
          ? 'RATES_SOURCES starts with oxr but OXR_APP_ID is not set'
          : 'the table of mid rates prices quotes in a sandbox only';
    if (config.sandbox) return { book: new TableRateSource(DEFAULT_MID_RATES) };
    return {
      book: new NoRates('no rate source is configured', retryAfterSeconds),
      warning: `${why}: every quote between different currencies is 503 RATES_UNAVAILABLE`,
    };
  }
  const refs = references
    .map((n) => connectorOf(n, config))
    .filter((c): c is RateConnector => c !== undefined)
    .map((c) => ({ name: c.name, covers: c.covers }));
  const sources = [connector.name, ...refs.map((r) => r.name)];
  const book = new LiveRateBook(
    async () => {
      const em = systemEm(orm);
      const rows = await latestExchangeRates(em, sources, ASSETS);
      return { rows, databaseNow: await ratesClock(em) };
    },
    {
      primary: connector.name,
      references: refs,
      maxAgeSeconds: config.rates.maxAgeSeconds,
      maxSourceAgeSeconds: connector.maxSourceAgeSeconds,
      maxDeviationPct: config.rates.maxDeviationPct,
      retryAfterSeconds,
    },
    log,
    events,
    now,
  );
  return { book };
}
