// Mid-market rates. Every source quotes against USD only; cross rates are derived through USD
// so a table of N entries prices all N² pairs consistently (no triangular arbitrage). A stablecoin
// the source quotes on its own is one of those N entries in every pair, its peg's included
// (decision 0163): pricing it 1:1 there and from its quote elsewhere would make a free round trip.
import { type AssetCode, type FiatCode, FIAT_ASSETS, pegOf } from './assets';
import { CambioError } from './errors';
import { Dec, divDown } from './money';

/** One leg's mid and where it came from: the source's name and the instant the source gave for it. */
export interface RateLeg {
  /** Units of the asset per 1 USD at mid. */
  mid: Dec;
  /** `table`, `oxr`, ... (config RATES_SOURCES); `peg` for 1:1 (same asset, an unquoted stablecoin and its peg). */
  source: string;
  /** The instant the source stamped on the rate; null for the configured table and for USD itself. */
  sourceTime: Date | null;
}

export interface RateSource {
  /**
   * Units of `asset` per 1 USD at mid. A stablecoin answers with its own rate when the source quotes it
   * (`quotesOwnRate`), else with its peg's. Throws RATES_UNAVAILABLE.
   */
  midPerUsd(asset: AssetCode): Dec;
  /** The same mid with its provenance. Throws RATES_UNAVAILABLE when no usable rate prices `asset` now. */
  legOf(asset: AssetCode): RateLeg;
  /**
   * Whether `asset` is a stablecoin this source prices from a rate of its own, not its peg's, fresh or not (a
   * stale one is refused by `legOf`, never replaced by the peg). Always false for a fiat currency. Never throws:
   * a pegged pair asks it before it knows whether it needs a rate.
   */
  quotesOwnRate(asset: AssetCode): boolean;
}

/** What a process holds: the rates as they are now (a table answers itself; live rates a cached snapshot). */
export interface RateBook {
  current(): Promise<RateSource>;
}

/** The 503 of a leg without a usable rate; `retryAfterSeconds` is about when the next poll may bring one. */
export function ratesUnavailable(asset: string, reason: string, retryAfterSeconds: number): CambioError {
  return new CambioError('RATES_UNAVAILABLE', `no usable exchange rate for ${asset} now (${reason}); retry later`, {
    asset,
    reason,
    retryAfterSeconds,
  });
}

/**
 * Whether base→quote is 1:1 without a rate: the same asset, or two assets of one peg (a stablecoin and its fiat, two
 * stablecoins) neither of which the source quotes on its own. A quoted one is priced from its quote, like any pair.
 */
export function isPeggedPair(source: RateSource, base: AssetCode, quote: AssetCode): boolean {
  if (base === quote) return true;
  return pegOf(base) === pegOf(quote) && !source.quotesOwnRate(base) && !source.quotesOwnRate(quote);
}

/** Which rates priced a quote base→quote: the primary's name and the older of its legs' instants. */
export function provenanceOf(source: RateSource, base: AssetCode, quote: AssetCode): Omit<RateLeg, 'mid'> {
  if (isPeggedPair(source, base, quote)) return { source: 'peg', sourceTime: null };
  const legs = [source.legOf(base), source.legOf(quote)];
  const times = legs.map((l) => l.sourceTime).filter((t): t is Date => t !== null);
  const oldest = times.length ? new Date(Math.min(...times.map((t) => t.getTime()))) : null;
  const named = legs.find((l) => l.source !== 'peg') ?? legs[0];
  return { source: named.source, sourceTime: oldest };
}

// Indicative mid rates (units per 1 USD), late 2026. Strings, never numbers: a rate typed as
// a JS number is already rounded to binary before Decimal ever sees it.
export const DEFAULT_MID_RATES: Readonly<Record<FiatCode, string>> = {
  USD: '1',
  BRL: '5.40',
  EUR: '0.8620',
  CAD: '1.3850',
  AUD: '1.5200',
  GBP: '0.7480',
  MXN: '18.60',
  HKD: '7.7800',
  SGD: '1.2900',
  PHP: '57.50',
  NZD: '1.7000',
  CHF: '0.8050',
  NOK: '10.10',
  DKK: '6.4300',
  PLN: '3.6600',
  SEK: '9.4500',
};

const RATE_PATTERN = /^\d+(\.\d+)?$/;

export class TableRateSource implements RateSource, RateBook {
  private readonly table: ReadonlyMap<FiatCode, Dec>;

  // Validated eagerly so a bad config fails at startup, not on the first quote in production.
  constructor(rates: Readonly<Record<FiatCode, string>> = DEFAULT_MID_RATES) {
    const table = new Map<FiatCode, Dec>();
    for (const code of FIAT_ASSETS) {
      const raw = rates[code];
      if (typeof raw !== 'string' || !RATE_PATTERN.test(raw)) {
        throw new Error(`mid rate for ${code} must be a positive decimal string, got ${JSON.stringify(raw)}`);
      }
      const rate = new Dec(raw);
      if (!rate.gt('0')) throw new Error(`mid rate for ${code} must be greater than zero`);
      table.set(code, rate);
    }
    // The table is "per 1 USD"; any other USD entry would silently skew every USD pair.
    if (!table.get('USD')?.eq('1')) throw new Error('mid rate for USD must be exactly 1');
    this.table = table;
  }

  midPerUsd(asset: AssetCode): Dec {
    const rate = this.table.get(pegOf(asset));
    if (!rate) throw new Error(`no mid rate for ${asset}`);
    return rate;
  }

  legOf(asset: AssetCode): RateLeg {
    return { mid: this.midPerUsd(asset), source: 'table', sourceTime: null };
  }

  // The table has fiat rows only: every stablecoin is its peg.
  quotesOwnRate(): boolean {
    return false;
  }

  current(): Promise<RateSource> {
    return Promise.resolve(this);
  }
}

/**
 * Mid rate base→quote (units of quote per 1 unit of base) = midPerUsd[quote] / midPerUsd[base].
 * Rounded toward zero at 40 significant digits so the mid is never overstated. Same asset, or
 * same peg with neither quoted on its own (`isPeggedPair`), is exactly 1 without dividing.
 */
export function midRate(source: RateSource, base: AssetCode, quote: AssetCode): Dec {
  if (isPeggedPair(source, base, quote)) return new Dec('1');
  return divDown(source.midPerUsd(quote), source.midPerUsd(base));
}

// Basis points are a configured integer count (not an amount), so they arrive as a number;
// they become a Decimal only after the integer check, where the conversion is exact.
const BPS_PER_UNIT = 10_000;

/**
 * Spread as a fraction (0.005 for 50 bps). Zero when nothing is really exchanged: same asset,
 * or a stablecoin against its own peg (USDC↔USD, USDC↔USDT, EURC↔EUR, BRLT↔BRL), whether the
 * mid of that pair is 1 or a source's quote of the stablecoin (the product rule's zero spread).
 */
export function spreadFor(base: AssetCode, quote: AssetCode, defaultBps = 50): Dec {
  if (!Number.isInteger(defaultBps) || defaultBps < 0 || defaultBps >= BPS_PER_UNIT) {
    throw new RangeError(`spread must be an integer number of bps in [0, ${BPS_PER_UNIT}), got ${defaultBps}`);
  }
  if (pegOf(base) === pegOf(quote)) return new Dec('0');
  return new Dec(defaultBps.toString()).div(BPS_PER_UNIT.toString());
}

/**
 * Value of `amount` of `asset` in USD at mid, not quantized to cents (callers compare it to a
 * review threshold, and rounding to cents first could flip a borderline result). The mid is the
 * one a quote of asset→USD would use: a USD stablecoin the source quotes is valued at its quote,
 * so one quoted above its peg cannot slip under the threshold by its premium.
 */
export function usdValue(source: RateSource, amount: Dec, asset: AssetCode): Dec {
  if (isPeggedPair(source, asset, 'USD')) return new Dec(amount);
  return new Dec(amount).div(source.midPerUsd(asset));
}
