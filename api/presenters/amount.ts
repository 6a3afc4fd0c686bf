import type { AssetCode } from '../../domain/assets';
import { Dec, toAmount } from '../../domain/money';

/** Spec Amount: `{value, asset, decimals}` with exactly the asset's decimals. */
export const amount = (value: Dec | string, asset: string) => toAmount(value, asset as AssetCode);
