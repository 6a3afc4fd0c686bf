import type { Em } from '../../db/orm';
import type { ServiceContext } from '../context';
import { createOperation } from './create';
import { requireAssetEnabled } from './checks';

/** A swap converts inside one account at the quote's rate; both assets must be enabled there. */
export function createSwap(s: ServiceContext, em: Em, body: { accountId: string; quoteId: string }) {
  return createOperation(s, em, {
    type: 'SWAP',
    accountId: body.accountId,
    quoteId: body.quoteId,
    async plan(_tx, account, quote) {
      requireAssetEnabled(account, quote.sourceAsset);
      requireAssetEnabled(account, quote.targetAsset);
      return { intent: { type: 'SWAP', sourceAsset: quote.sourceAsset, targetAsset: quote.targetAsset } };
    },
  });
}
