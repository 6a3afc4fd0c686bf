import type { AssetCode } from './assets';
import { Dec, toAmount } from './money';

/** Spec Amount: `{value, asset, decimals}` with exactly the asset's decimals, for an asset read back as a string. */
export const amount = (value: Dec | string, asset: string) => toAmount(value, asset as AssetCode);
