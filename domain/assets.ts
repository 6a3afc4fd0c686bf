// The closed set of assets the service handles. Everything else (decimals, pegs, spreads,
// rates) is derived from these tables so adding an asset is a one-place change.

export const FIAT_ASSETS = [
  'USD',
  'BRL',
  'EUR',
  'CAD',
  'AUD',
  'GBP',
  'MXN',
  'HKD',
  'SGD',
  'PHP',
  'NZD',
  'CHF',
  'NOK',
  'DKK',
  'PLN',
  'SEK',
] as const;

export const STABLECOINS = ['USDC', 'USDT', 'EURC', 'BRLT'] as const;

export const ASSETS = [...FIAT_ASSETS, ...STABLECOINS] as const;

export type FiatCode = (typeof FIAT_ASSETS)[number];
export type StablecoinCode = (typeof STABLECOINS)[number];
export type AssetCode = (typeof ASSETS)[number];

// Every stablecoin is redeemable 1:1 for exactly one fiat currency; rates and spreads use that.
const PEGS: Readonly<Record<StablecoinCode, FiatCode>> = {
  USDC: 'USD',
  USDT: 'USD',
  EURC: 'EUR',
  BRLT: 'BRL',
};

// Fiat is settled in minor units (cents); stablecoins are tracked at 6 decimals, the
// on-chain precision of USDC/USDT. A count of digits, not an amount, so `number` is fine.
const FIAT_DECIMALS = 2;
const STABLECOIN_DECIMALS = 6;

const ASSET_SET: ReadonlySet<string> = new Set<string>(ASSETS);
const STABLECOIN_SET: ReadonlySet<string> = new Set<string>(STABLECOINS);

export const isAssetCode = (x: unknown): x is AssetCode => typeof x === 'string' && ASSET_SET.has(x);

export const isStablecoin = (code: AssetCode): code is StablecoinCode => STABLECOIN_SET.has(code);

export function assetDecimals(code: AssetCode): number {
  if (!isAssetCode(code)) throw new Error(`unknown asset ${String(code)}`);
  return isStablecoin(code) ? STABLECOIN_DECIMALS : FIAT_DECIMALS;
}

// Fiat maps to itself so callers can compare `pegOf(a) === pegOf(b)` without special cases.
export function pegOf(code: AssetCode): FiatCode {
  if (!isAssetCode(code)) throw new Error(`unknown asset ${String(code)}`);
  return isStablecoin(code) ? PEGS[code] : code;
}
