import type { Em } from '../../db/orm';
import { CambioError } from '../../domain/errors';
import type { ServiceContext } from '../context';
import { createOperation } from './create';
import { requireAssetEnabled } from './checks';

/**
 * A swap converts inside one account at the quote's rate; both assets must be enabled there. A 1:1 quote of one asset
 * (what a transfer or a same-asset deposit or withdrawal is priced with) converts nothing: refused, and left unconsumed
 * for the operation it was made for (decision 0181).
 */
export function createSwap(s: ServiceContext, em: Em, body: { accountId: string; quoteId: string }) {
  return createOperation(s, em, {
    type: 'SWAP',
    accountId: body.accountId,
    quoteId: body.quoteId,
    async plan(_tx, account, quote) {
      if (quote.sourceAsset === quote.targetAsset) {
        const message = `quotes ${quote.sourceAsset} to ${quote.targetAsset}; a swap converts between two assets`;
        throw new CambioError('VALIDATION_ERROR', `the quote ${message}`, {
          errors: [{ path: '/quoteId', message }],
        });
      }
      requireAssetEnabled(account, quote.sourceAsset);
      requireAssetEnabled(account, quote.targetAsset);
      return { intent: { type: 'SWAP', sourceAsset: quote.sourceAsset, targetAsset: quote.targetAsset } };
    },
  });
}
