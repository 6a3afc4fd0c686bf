// Pure quote arithmetic. Rule of thumb: every rounding step goes against the customer by at
// most one minor unit, so the customer never receives more than the quoted rate gives and we
// never quote a rate we cannot honour.
import { type AssetCode, assetDecimals } from './assets';
import { CambioError } from './errors';
import { Dec, divUp, mulDown } from './money';
import { type RateSource, midRate, ratesUnavailable, spreadFor } from './rates';

/** Rates are quoted, stored and computed with at most this many decimal places. */
export const RATE_DECIMALS = 10;

// The Retry-After of a pair whose rate rounds to zero: the default RATES_POLL_SECONDS, when the next poll may bring
// other rates (the arithmetic does not know this deployment's interval).
export const UNUSABLE_RATE_RETRY_AFTER_SECONDS = 30;

export interface QuoteInput {
  rates: RateSource;
  sourceAsset: AssetCode;
  targetAsset: AssetCode;
  sourceAmount?: Dec;
  targetAmount?: Dec;
  spreadBps?: number;
}

export interface QuoteFee {
  /** The spread expressed in the source asset; already included in the effective rate. */
  amount: Dec;
  asset: AssetCode;
  percentage: Dec;
}

export interface QuoteResult {
  sourceAmount: Dec;
  targetAmount: Dec;
  midRate: Dec;
  effectiveRate: Dec;
  spread: Dec;
  fee: QuoteFee | null;
}

/** Truncates a rate to RATE_DECIMALS: a quoted rate is never higher than the true one. */
export const quantizeRate = (rate: Dec): Dec => new Dec(rate).toDecimalPlaces(RATE_DECIMALS, Dec.ROUND_DOWN);

/** Up to 10 decimals, truncated, trailing zeros dropped: "5.373", "1", "0.1851851851". */
export const formatRate = (rate: Dec): string => quantizeRate(rate).toFixed();

function checkAmount(amount: Dec, asset: AssetCode, path: string): Dec {
  // Re-wrap so a caller's Decimal from another clone (e.g. global precision 20) can't leak in.
  const d = new Dec(amount);
  const decimals = assetDecimals(asset);
  if (!d.isFinite()) {
    throw new CambioError('INVALID_AMOUNT', `${path} must be a finite amount`, { path, asset });
  }
  if (d.decimalPlaces() > decimals) {
    throw new CambioError('INVALID_AMOUNT_PRECISION', `${path} has more than ${decimals} decimal places for ${asset}`, {
      path,
      asset,
      decimals,
    });
  }
  if (!d.gt('0')) throw new CambioError('INVALID_AMOUNT', `${path} must be greater than zero`, { path, asset });
  return d;
}

/**
 * Prices a conversion. Exactly one of sourceAmount (fixed source) or targetAmount (fixed target)
 * must be given; the other side is derived from the *quantized* effective rate, so anyone can
 * reproduce the amounts from the rendered quote:
 *   mid       = trunc10(midPerUsd[target] / midPerUsd[source])
 *   effective = trunc10(mid × (1 − spread))
 *   fixed source: target = roundDown(source × effective, target decimals)
 *   fixed target: source = roundUp(target ÷ effective, source decimals)
 */
export function computeQuote(input: QuoteInput): QuoteResult {
  const { rates, sourceAsset, targetAsset } = input;
  const oneOf = (): CambioError => {
    const message = 'exactly one of sourceAmount or targetAmount must be provided';
    return new CambioError('VALIDATION_ERROR', message, { errors: [{ path: '/sourceAmount', message }] });
  };
  if ((input.sourceAmount === undefined) === (input.targetAmount === undefined)) throw oneOf();

  const mid = quantizeRate(midRate(rates, sourceAsset, targetAsset));
  const spread = spreadFor(sourceAsset, targetAsset, input.spreadBps);
  const effective = quantizeRate(mulDown(mid, new Dec('1').minus(spread)));
  // A source's mids are within 1e-9 .. 1e9 (rates/values.ts), yet a leg at each end crosses at 1e-18, nothing
  // at 10 decimals: the pair has no usable rate now (503), as with a stale leg. Dividing by it would be meaningless.
  if (!effective.gt('0')) {
    throw ratesUnavailable(
      targetAsset,
      `the rate ${sourceAsset}→${targetAsset} rounds to zero at ${RATE_DECIMALS} decimals`,
      UNUSABLE_RATE_RETRY_AFTER_SECONDS,
    );
  }

  let sourceAmount: Dec;
  let targetAmount: Dec;
  if (input.sourceAmount !== undefined) {
    sourceAmount = checkAmount(input.sourceAmount, sourceAsset, '/sourceAmount');
    targetAmount = mulDown(sourceAmount, effective).toDecimalPlaces(assetDecimals(targetAsset), Dec.ROUND_DOWN);
    if (targetAmount.isZero()) {
      throw new CambioError(
        'INVALID_AMOUNT',
        `sourceAmount ${sourceAmount.toFixed()} ${sourceAsset} is too small to buy any ${targetAsset}`,
        { path: '/sourceAmount', asset: sourceAsset },
      );
    }
  } else if (input.targetAmount !== undefined) {
    targetAmount = checkAmount(input.targetAmount, targetAsset, '/targetAmount');
    // Positive target ÷ positive rate rounded up can never be zero.
    sourceAmount = divUp(targetAmount, effective).toDecimalPlaces(assetDecimals(sourceAsset), Dec.ROUND_UP);
  } else {
    throw oneOf(); // unreachable after the check above; keeps the types honest without a cast
  }

  // The spread is not charged on top: it is already in the rate. The fee line only discloses
  // it, in the source asset, rounded half-up to the source's minor unit.
  const fee: QuoteFee | null = spread.isZero()
    ? null
    : {
        amount: sourceAmount.times(spread).toDecimalPlaces(assetDecimals(sourceAsset), Dec.ROUND_HALF_UP),
        asset: sourceAsset,
        percentage: spread,
      };

  return { sourceAmount, targetAmount, midRate: mid, effectiveRate: effective, spread, fee };
}
