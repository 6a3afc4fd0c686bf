// What quotes price from when the sources are live: the latest stored rows (db/repositories/exchange-rates.ts), read
// at most once a second per process, never a query per quote, and never a call to a source (a source that hangs
// delays only its poll). The breakers are applied here, per leg, when a quote asks for it (../shared/spec/decisions.md,
// "Live exchange rates"): no primary rate received within RATES_MAX_AGE_SECONDS, or a primary that differs from a
// reference's fixing by more than RATES_MAX_DEVIATION_PCT, and the leg is RATES_UNAVAILABLE. A stablecoin the primary
// quotes on its own is a leg of its own: judged on its own row, and against its peg's reference (decision 0163).
import type { Logger } from 'pino';
import { type AssetCode, STABLECOINS, isStablecoin, pegOf } from '../domain/assets';
import { Dec } from '../domain/money';
import { type RateBook, type RateLeg, type RateSource, ratesUnavailable } from '../domain/rates';
import type { ExchangeRateRow } from '../db/repositories/exchange-rates';

/** The latest rows, and the database's clock as the read ended (the clock every age is measured by: 0298). */
export interface RatesRead {
  rows: ExchangeRateRow[];
  databaseNow: Date;
}

/** How long a snapshot of the rows answers quotes before the next one reads them again. */
export const SNAPSHOT_MS = 1000;

export interface BookSettings {
  /** The source that prices quotes (the first of RATES_SOURCES). */
  primary: string;
  /** The other sources, with the currencies each is the reference for. */
  references: { name: string; covers: readonly string[] }[];
  maxAgeSeconds: number;
  /** How old the primary's own instant may be (its connector's `maxSourceAgeSeconds`, decision 0297). */
  maxSourceAgeSeconds: number;
  maxDeviationPct: string;
  /** The Retry-After of a refused leg: about when the next poll may bring a usable rate. */
  retryAfterSeconds: number;
}

export interface BookEvents {
  /** A currency's (or a stablecoin's own quote's) deviation breaker opened (`deviationPct` set) or closed again. */
  onDeviation?(currency: string, open: boolean, detail: DeviationDetail): void;
}

export interface DeviationDetail {
  primary: string;
  reference: string;
  primaryMid: string;
  referenceMid: string;
  deviationPct: string;
}

interface Leg {
  mid: Dec;
  sourceTime: Date | null;
  receivedAt: Date | null;
}

/** One source's rows as units per 1 USD, whatever base it publishes against (the ECB's is EUR). */
export function perUsd(rows: ExchangeRateRow[]): Map<string, Leg> {
  const legs = new Map<string, Leg>();
  const base = rows[0]?.base;
  if (base === undefined) return legs;
  if (base === 'USD') {
    for (const r of rows) {
      if (r.base === 'USD')
        legs.set(r.currency, { mid: new Dec(r.mid), sourceTime: r.sourceTime, receivedAt: r.receivedAt });
    }
    return legs;
  }
  // Units per `base`: X per USD = (X per base) / (USD per base); the base itself is 1 / (USD per base), and USD is 1:
  // a source that publishes USD is a reference for it too, so a USD stablecoin the primary quotes is judged against
  // it like any coin against its peg (decision 0193).
  const usd = rows.find((r) => r.currency === 'USD' && r.base === base);
  if (!usd) return legs;
  const usdMid = new Dec(usd.mid);
  const older = (a: Date, b: Date) => (a < b ? a : b);
  legs.set(base, { mid: new Dec(1).div(usdMid), sourceTime: usd.sourceTime, receivedAt: usd.receivedAt });
  legs.set('USD', { mid: new Dec(1), sourceTime: usd.sourceTime, receivedAt: usd.receivedAt });
  for (const r of rows) {
    if (r.base !== base || r.currency === 'USD') continue;
    legs.set(r.currency, {
      mid: new Dec(r.mid).div(usdMid),
      sourceTime: older(r.sourceTime, usd.sourceTime),
      receivedAt: older(r.receivedAt, usd.receivedAt),
    });
  }
  return legs;
}

/** `10800` as `3 hours`, `518400` as `6 days`: a bound of whole hours or days as an operator reads it. */
function inWords(seconds: number): string {
  const [n, unit] = seconds % 86_400 === 0 ? [seconds / 86_400, 'day'] : [seconds / 3600, 'hour'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** A snapshot of the rows, priced leg by leg as of the moment each quote asks. */
export class LiveRates implements RateSource {
  constructor(
    private readonly settings: BookSettings,
    private readonly legs: ReadonlyMap<string, Leg>,
    /** Currencies, and stablecoins quoted on their own, whose primary rate is too far from a reference's fixing. */
    readonly deviating: ReadonlyMap<string, DeviationDetail>,
    private readonly now: () => number = Date.now,
  ) {}

  midPerUsd(asset: AssetCode): Dec {
    return this.legOf(asset).mid;
  }

  legOf(asset: AssetCode): RateLeg {
    const { primary, maxAgeSeconds, maxSourceAgeSeconds, retryAfterSeconds } = this.settings;
    const peg = pegOf(asset);
    // A stablecoin prices at its peg unless the primary quotes it (then its own row, however old: a stale quote is
    // refused below, never replaced by the peg, which the market may no longer hold it to).
    const leg = this.legs.get(asset) ?? this.legs.get(peg);
    if (!leg && peg === 'USD') return { mid: new Dec(1), source: primary, sourceTime: null };
    if (!leg) throw ratesUnavailable(asset, `${primary} has no rate for it`, retryAfterSeconds);
    if (leg.receivedAt && this.now() - leg.receivedAt.getTime() > maxAgeSeconds * 1000) {
      throw ratesUnavailable(
        asset,
        `${primary} last answered at ${leg.receivedAt.toISOString()}, over RATES_MAX_AGE_SECONDS=${maxAgeSeconds}`,
        retryAfterSeconds,
      );
    }
    // Received is not new: a source that keeps answering one instant (a frozen feed, a stale mirror) is received on
    // every poll, and its rate would price quotes for ever (decision 0297).
    if (leg.sourceTime && this.now() - leg.sourceTime.getTime() > maxSourceAgeSeconds * 1000) {
      throw ratesUnavailable(
        asset,
        `${primary}'s latest rate is stamped ${leg.sourceTime.toISOString()}, over ${inWords(maxSourceAgeSeconds)} ` +
          `(${maxSourceAgeSeconds} s) old for ${primary}`,
        retryAfterSeconds,
      );
    }
    // The stablecoin's own quote against its peg's reference, and the peg's own row: a primary off on BRL is not
    // trusted on BRLT either (decision 0116: BRLT follows BRL).
    const deviation = this.deviating.get(asset) ?? this.deviating.get(peg);
    if (deviation) {
      throw ratesUnavailable(
        asset,
        `${primary} differs from ${deviation.reference} by ${deviation.deviationPct}%, over RATES_MAX_DEVIATION_PCT`,
        retryAfterSeconds,
      );
    }
    return { mid: leg.mid, source: primary, sourceTime: leg.sourceTime };
  }

  quotesOwnRate(asset: AssetCode): boolean {
    return isStablecoin(asset) && this.legs.has(asset);
  }
}

/** |primary − reference| / reference × 100, at 4 decimals (for the log line and the breaker). */
export function deviationPct(primary: Dec, reference: Dec): Dec {
  return primary.minus(reference).abs().div(reference).times(100);
}

/** The rows of the moment as a RateSource, and which legs a reference finds too far off. */
export function snapshotOf(settings: BookSettings, rows: ExchangeRateRow[], now: () => number = Date.now): LiveRates {
  const bySource = new Map<string, ExchangeRateRow[]>();
  for (const r of rows) bySource.set(r.source, [...(bySource.get(r.source) ?? []), r]);
  const legs = perUsd(bySource.get(settings.primary) ?? []);
  const limit = new Dec(settings.maxDeviationPct);
  const deviating = new Map<string, DeviationDetail>();
  for (const ref of settings.references) {
    const refLegs = perUsd(bySource.get(ref.name) ?? []);
    for (const currency of ref.covers) {
      const r = refLegs.get(currency);
      if (!r) continue;
      // The currency's own row, and each stablecoin pegged to it that the primary quotes on its own (BRLT against
      // PTAX's BRL): a peg is a promise of the same value, so its reference judges the coin's quote as well.
      const pegged = STABLECOINS.filter((coin) => pegOf(coin) === currency && legs.has(coin));
      for (const leg of [currency, ...pegged]) {
        const p = legs.get(leg);
        if (!p || deviating.has(leg)) continue;
        const pct = deviationPct(p.mid, r.mid);
        if (!pct.gt(limit)) continue;
        deviating.set(leg, {
          primary: settings.primary,
          reference: ref.name,
          primaryMid: p.mid.toSignificantDigits(12).toFixed(),
          referenceMid: r.mid.toSignificantDigits(12).toFixed(),
          deviationPct: pct.toDecimalPlaces(4).toFixed(),
        });
      }
    }
  }
  return new LiveRates(settings, legs, deviating, now);
}

/** The process's live rates: a snapshot of the stored rows, read again at most every SNAPSHOT_MS, one read at once. */
export class LiveRateBook implements RateBook {
  private snapshot: { at: number; rates: LiveRates } | undefined;
  private loading: Promise<LiveRates> | undefined;
  private open = new Map<string, DeviationDetail>();

  constructor(
    private readonly read: () => Promise<RatesRead>,
    readonly settings: BookSettings,
    private readonly log: Logger,
    private readonly events: BookEvents = {},
    private readonly now: () => number = Date.now,
  ) {}

  current(): Promise<RateSource> {
    const s = this.snapshot;
    if (s && this.now() - s.at < SNAPSHOT_MS) return Promise.resolve(s.rates);
    this.loading ??= this.load().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async load(): Promise<LiveRates> {
    // The snapshot's age counts from the read's start: its rows are of that instant, however long the read took.
    const at = this.now();
    const { rows, databaseNow } = await this.read();
    // Ages are the database's: the rows were received by its clock (rates/poll.ts), and this host's may be minutes
    // off (0298). The offset is taken as the read returns, its clock read last: right within a few milliseconds.
    const offset = databaseNow.getTime() - this.now();
    const rates = snapshotOf(this.settings, rows, () => this.now() + offset);
    this.snapshot = { at, rates };
    this.noteDeviations(rates.deviating);
    return rates;
  }

  // A log line and the metric when a breaker opens or closes, not on every quote it refuses.
  private noteDeviations(now: ReadonlyMap<string, DeviationDetail>): void {
    for (const [currency, detail] of now) {
      if (this.open.has(currency)) continue;
      this.log.warn(
        { currency, ...detail },
        'rates: primary beyond RATES_MAX_DEVIATION_PCT of the reference; pairs with this leg refused',
      );
      this.events.onDeviation?.(currency, true, detail);
    }
    for (const [currency, detail] of this.open) {
      if (now.has(currency)) continue;
      this.log.info({ currency }, 'rates: primary back within RATES_MAX_DEVIATION_PCT of the reference; quoting again');
      this.events.onDeviation?.(currency, false, detail);
    }
    this.open = new Map(now);
  }
}

/** A deployment with no usable source: every pair between different currencies is RATES_UNAVAILABLE. */
export class NoRates implements RateSource, RateBook {
  constructor(
    private readonly why: string,
    private readonly retryAfterSeconds: number,
  ) {}

  midPerUsd(asset: AssetCode): Dec {
    return this.legOf(asset).mid;
  }

  legOf(asset: AssetCode): RateLeg {
    throw ratesUnavailable(asset, this.why, this.retryAfterSeconds);
  }

  // No source, no quote of a stablecoin: pegged pairs stay 1:1 and still work.
  quotesOwnRate(): boolean {
    return false;
  }

  current(): Promise<RateSource> {
    return Promise.resolve(this);
  }
}
