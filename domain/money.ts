// Money is decimal.js all the way down: a JS `number` never holds an amount or a rate, because
// binary floating point cannot represent 0.1 and silently loses cents. We use a private clone
// so nothing here depends on (or changes) the global Decimal configuration.
import Decimal from 'decimal.js';
import { CambioError } from './errors';
import { type AssetCode, assetDecimals } from './assets';

// 40 significant digits: far more than any amount (6 decimals) times any rate (10 decimals)
// needs, so products of realistic values are exact and only divisions ever round.
export const Dec = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Dec = Decimal;

// Directed contexts: when a result is later rounded DOWN (or UP) to an asset's decimals, the
// intermediate 40-digit rounding must go the same way, otherwise a value a hair below a cent
// boundary could be rounded up by the context and then "down" to the wrong side.
const DecDown = Dec.clone({ rounding: Decimal.ROUND_DOWN });
const DecUp = Dec.clone({ rounding: Decimal.ROUND_UP });

/** a × b, never larger in magnitude than the exact product. */
export const mulDown = (a: Dec, b: Dec): Dec => new Dec(new DecDown(a).times(b));
/** a ÷ b, never larger in magnitude than the exact quotient. */
export const divDown = (a: Dec, b: Dec): Dec => new Dec(new DecDown(a).div(b));
/** a ÷ b, never smaller in magnitude than the exact quotient. */
export const divUp = (a: Dec, b: Dec): Dec => new Dec(new DecUp(a).div(b));

const AMOUNT_PATTERN = /^-?\d+(\.\d+)?$/;

// Amounts live in numeric(38,6) columns: 32 digits before the point. A request amount gets at most 15 (just
// under 10^15, a quadrillion units of any asset): a quote multiplies it by a rate (the widest cross rate of
// the table is ~77) and balances add many of them, and both must stay far inside the column, or Postgres
// answers "numeric field overflow". The length cap bounds the work spent on a string of zeros.
export const MAX_AMOUNT_INTEGER_DIGITS = 15;
export const MAX_AMOUNT_LENGTH = 64;
/** The smallest magnitude an amount may not reach: 10^15. */
export const AMOUNT_LIMIT = new Dec(10).pow(MAX_AMOUNT_INTEGER_DIGITS);

/**
 * Whether an AmountValue string is within the bounds above. A string that is not an AmountValue at all is
 * "within bounds" here: the syntax is the pattern's to report, not this check's.
 */
export function withinAmountBounds(value: string): boolean {
  if (!AMOUNT_PATTERN.test(value)) return true;
  if (value.length > MAX_AMOUNT_LENGTH) return false;
  const integerDigits = value.replace(/^-/, '').split('.')[0].replace(/^0+/, '');
  return integerDigits.length <= MAX_AMOUNT_INTEGER_DIGITS;
}

const outOfRange = (path: string, asset: string) =>
  new CambioError(
    'INVALID_AMOUNT',
    `${path} is out of range: at most ${MAX_AMOUNT_INTEGER_DIGITS} digits before the decimal point`,
    {
      path,
      asset,
    },
  );

/** Throws INVALID_AMOUNT when a computed amount (a quote's derived side) is past what a request may carry. */
export function checkAmountLimit(value: Dec, asset: string, path: string): void {
  if (value.abs().gte(AMOUNT_LIMIT)) throw outOfRange(path, asset);
}

export interface ParseAmountOptions {
  /** Reject zero and negatives with INVALID_AMOUNT. Defaults to true: fail closed. */
  positive?: boolean;
  /** Where the value sits in the request, echoed in error details. */
  path?: string;
}

/**
 * Parses a request AmountValue. The checks run on the string, not on the parsed Decimal, so
 * "1.500" for a 2-decimal asset is rejected: the client sent more precision than exists.
 */
export function parseAmountValue(value: string, asset: AssetCode, opts: ParseAmountOptions = {}): Dec {
  const path = opts.path ?? 'amount';
  const positive = opts.positive ?? true;
  if (typeof value !== 'string' || !AMOUNT_PATTERN.test(value)) {
    const message = 'must be a decimal string such as "100.00" (digits, optional "-" and ".")';
    throw new CambioError('VALIDATION_ERROR', `${path} ${message}`, { errors: [{ path, message }] });
  }
  const decimals = assetDecimals(asset);
  const dot = value.indexOf('.');
  const fractionDigits = dot === -1 ? 0 : value.length - dot - 1;
  if (fractionDigits > decimals) {
    throw new CambioError(
      'INVALID_AMOUNT_PRECISION',
      `${path} has ${fractionDigits} decimal places but ${asset} allows at most ${decimals}`,
      { path, asset, decimals },
    );
  }
  const parsed = new Dec(value);
  if (positive && !parsed.gt('0')) {
    throw new CambioError('INVALID_AMOUNT', `${path} must be greater than zero`, { path, asset });
  }
  // "-0" parses to negative zero; normalise so it never prints as "-0.00".
  return parsed.isZero() ? new Dec('0') : parsed;
}

/**
 * Writes a value with exactly the asset's decimals. It never rounds: a value with more
 * decimals than the asset has is a bug upstream (someone forgot to quantize), so it throws.
 */
export function formatAmount(value: Dec | string, asset: AssetCode): string {
  const decimals = assetDecimals(asset);
  const d = new Dec(value);
  if (!d.isFinite()) throw new Error(`cannot format non-finite amount ${d.toString()}`);
  if (d.decimalPlaces() > decimals) {
    throw new Error(`amount ${d.toFixed()} has more than ${decimals} decimals for ${asset}; quantize first`);
  }
  return (d.isZero() ? new Dec('0') : d).toFixed(decimals);
}

export interface Amount {
  value: string;
  asset: AssetCode;
  decimals: number;
}

export function toAmount(value: Dec | string, asset: AssetCode): Amount {
  return { value: formatAmount(value, asset), asset, decimals: assetDecimals(asset) };
}
