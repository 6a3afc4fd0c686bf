import type { Em } from '../../../db/orm';
import { CambioError } from '../../../domain/errors';
import { fundingInstruction, Rail, railAccepts } from '../../../domain/funding';
import type { ServiceContext } from '../context';
import { requireAssetEnabled, requireRailConfigured } from './checks';
import { createOperation } from './create';

export interface DepositBody {
  accountId: string;
  quoteId: string;
  fundingInstruction: { rail: Rail };
}

/**
 * A deposit: the quote's source is the asset paid in through the rail, its target the asset credited.
 * The window and replay window are fixed at creation and handed to the workflow.
 */
export function createDeposit(s: ServiceContext, em: Em, body: DepositBody) {
  const rail = body.fundingInstruction.rail;
  return createOperation(s, em, {
    type: 'DEPOSIT',
    accountId: body.accountId,
    quoteId: body.quoteId,
    async plan(_tx, account, quote, operationId) {
      if (!railAccepts(rail, quote.sourceAsset)) {
        throw new CambioError('RAIL_ASSET_MISMATCH', `${rail} does not pay in ${quote.sourceAsset}`, {
          rail,
          asset: quote.sourceAsset,
        });
      }
      requireAssetEnabled(account, quote.targetAsset);
      requireRailConfigured(s.config, rail);
      const due = new Date(Date.now() + s.config.depositWindowSeconds * 1000);
      return {
        intent: { type: 'DEPOSIT', fundingInstruction: fundingInstruction(rail, operationId, quote.sourceAsset, due) },
        workflowInput: {
          depositWindowSeconds: s.config.depositWindowSeconds,
          replayWindowSeconds: s.config.replayWindowSeconds,
        },
      };
    },
  });
}
