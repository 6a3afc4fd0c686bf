import { ASSETS, type AssetCode } from '../domain/assets';
import { CambioError } from '../domain/errors';
import { formatRate } from '../domain/quote-math';
import { midRate, provenanceOf, type RateBook } from '../domain/rates';

export interface RateView {
  asset: AssetCode;
  /** Units of `asset` per 1 `base` at mid, as a quote would use it now; null while the pair is refused. */
  mid: string | null;
  source: string | null;
  sourceTime: string | null;
  /** Why a new quote of this pair would be 503 RATES_UNAVAILABLE now; null when it would price. */
  unavailable: string | null;
}

/**
 * The mids quotes would use now against `base` (GET /api/rates, `cambio rates`): from the same cached rates as a
 * quote, so it shows what a quote would get, breakers included, never a source's own answer.
 */
export async function currentRates(book: RateBook, base: AssetCode): Promise<{ base: AssetCode; rates: RateView[] }> {
  const source = await book.current();
  const rates = ASSETS.filter((a) => a !== base).map((asset): RateView => {
    try {
      const mid = formatRate(midRate(source, base, asset));
      const { source: name, sourceTime } = provenanceOf(source, base, asset);
      return { asset, mid, source: name, sourceTime: sourceTime?.toISOString() ?? null, unavailable: null };
    } catch (err) {
      if (!(err instanceof CambioError) || err.code !== 'RATES_UNAVAILABLE') throw err;
      return { asset, mid: null, source: null, sourceTime: null, unavailable: err.message };
    }
  });
  return { base, rates };
}
