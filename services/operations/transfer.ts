import { randomUUID } from 'node:crypto';
import type { Em } from '../../db/orm';
import type { Quote } from '../../db/entities';
import type { AssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { parseAmountValue } from '../../domain/money';
import { notFound } from '../../domain/errors';
import type { ServiceContext } from '../context';
import { requireAssetEnabled } from './checks';
import { createOperation } from './create';

export interface TransferBody {
  sourceAccountId: string;
  targetAccountId: string;
  amount: { value: string; asset: AssetCode };
  quoteId?: string;
}

/**
 * Same-asset move between two accounts of one customer. Without `quoteId` (the normal case) a 1:1 quote is
 * generated and consumed in the same transaction, so every operation still has exactly one quote.
 */
export function createTransfer(s: ServiceContext, em: Em, body: TransferBody) {
  const value = parseAmountValue(body.amount.value, body.amount.asset, { path: '/amount/value' });
  if (body.sourceAccountId === body.targetAccountId) {
    throw new CambioError('SAME_ACCOUNT_TRANSFER', 'source and target accounts must differ');
  }
  return createOperation(s, em, {
    type: 'TRANSFER',
    accountId: body.sourceAccountId,
    otherAccountId: body.targetAccountId,
    quoteId: body.quoteId,
    generateQuote: (account, now): Quote => ({
      id: randomUUID(),
      customerId: account.customerId,
      accountId: account.id,
      sourceAsset: body.amount.asset,
      sourceAmount: value,
      targetAsset: body.amount.asset,
      targetAmount: value,
      midRate: '1',
      effectiveRate: '1',
      spread: '0',
      rateSource: 'peg',
      rateSourceTime: null,
      feeAmount: null,
      expiresAt: new Date(now.getTime() + s.config.quoteTtlSeconds * 1000),
      consumedAt: null,
      consumedBy: null,
      createdAt: now,
    }),
    async plan(_tx, source, quote, _id, target) {
      // A reserved quote must say exactly what the body says: no FX on a transfer.
      if (
        quote.sourceAsset !== body.amount.asset ||
        quote.targetAsset !== body.amount.asset ||
        !quote.sourceAmount.eq(value) ||
        !quote.targetAmount.eq(value)
      ) {
        throw new CambioError('VALIDATION_ERROR', 'a transfer quote must be 1:1 in the transfer asset and amount', {
          errors: [{ path: '/quoteId', message: 'does not match amount' }],
        });
      }
      // Read with the source account, in the caller's scope: another customer's account is not found (404).
      if (!target) throw notFound('target account');
      if (target.status !== 'ACTIVE')
        throw new CambioError('ACCOUNT_NOT_ACTIVE', 'the target account is not ACTIVE', {
          accountId: target.id,
          status: target.status,
        });
      requireAssetEnabled(source, body.amount.asset);
      requireAssetEnabled(target, body.amount.asset);
      return {
        intent: { type: 'TRANSFER', targetAccount: { id: target.id, owner: target.legalName } },
        targetAccountId: target.id,
      };
    },
  });
}
