import type { Em } from '../../db/orm';
import { BeneficiarySchema, PaymentInstructionSchema } from '../../db/entities';
import type { AssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { Dec } from '../../domain/money';
import { type RateBook, usdValue } from '../../domain/rates';
import { notFound } from '../../domain/errors';
import type { ServiceContext } from '../context';
import { requireAssetEnabled, requirePayoutNetwork, requirePayoutRail } from './checks';
import { createOperation } from './create';

export interface WithdrawalBody {
  accountId: string;
  quoteId: string;
  beneficiary: { type: 'REFERENCE' | 'INLINE'; id?: string; paymentInstruction?: { type: 'REFERENCE'; id: string } };
}

/**
 * A payout to a saved beneficiary through one of its APPROVED instructions. The quote's source is debited
 * from the account, its target is the instruction's asset. Above the review threshold (USD value of the
 * target at mid) the workflow holds it for an operator.
 */
export async function createWithdrawal(s: ServiceContext, em: Em, body: WithdrawalBody) {
  if (body.beneficiary.type === 'INLINE') {
    throw new CambioError(
      'INLINE_BENEFICIARY_NOT_SUPPORTED',
      'inline beneficiaries are not supported; save the beneficiary and reference it',
    );
  }
  const ref = body.beneficiary as Required<Pick<WithdrawalBody['beneficiary'], 'id' | 'paymentInstruction'>>;
  // Read before the transaction: the rates' snapshot may need its once-a-second read (rates/book.ts).
  const rates = await s.rates.current();
  return createOperation(s, em, {
    type: 'WITHDRAWAL',
    accountId: body.accountId,
    quoteId: body.quoteId,
    async plan(tx, account, quote) {
      const beneficiary = await tx.findOne(BeneficiarySchema, { id: ref.id });
      if (!beneficiary) throw notFound('beneficiary');
      const instruction = await tx.findOne(PaymentInstructionSchema, {
        id: ref.paymentInstruction.id,
        beneficiaryId: beneficiary.id,
      });
      if (!instruction) throw notFound('payment instruction');
      if (instruction.status !== 'APPROVED') {
        throw new CambioError('PAYMENT_INSTRUCTION_NOT_APPROVED', `the payment instruction is ${instruction.status}`, {
          paymentInstructionId: instruction.id,
          status: instruction.status,
        });
      }
      if (quote.targetAsset !== instruction.asset) {
        throw new CambioError(
          'RAIL_ASSET_MISMATCH',
          `the instruction pays out ${instruction.asset}, the quote delivers ${quote.targetAsset}`,
          { asset: quote.targetAsset, instructionAsset: instruction.asset },
        );
      }
      requireAssetEnabled(account, quote.sourceAsset);
      requirePayoutRail(s.config, instruction.rail, instruction.asset);
      requirePayoutNetwork(s.config, instruction);
      const usd = usdOrUnknown(rates, quote.targetAmount, quote.targetAsset as AssetCode);
      // A locked quote still executes when no fresh rate values it now; one of unknown value is reviewed.
      const requiresReview = usd === undefined || usd.gt(new Dec(s.config.withdrawalReviewThresholdUsd));
      return {
        intent: {
          type: 'WITHDRAWAL',
          beneficiary: {
            id: beneficiary.id,
            holder: beneficiary.holder,
            paymentInstruction: {
              id: instruction.id,
              rail: instruction.rail,
              keyType: instruction.dictKeyType,
              key: instruction.dictKey,
              // A WALLET's chain, which its events show (decision 0134); a PIX key has none.
              ...(instruction.network ? { network: instruction.network } : {}),
            },
          },
        },
        workflowInput: { requiresReview },
      };
    },
  });
}

/** The USD value at mid, or undefined when the rates cannot value `asset` now (RATES_UNAVAILABLE, decision 0116). */
function usdOrUnknown(rates: Awaited<ReturnType<RateBook['current']>>, amount: Dec, asset: AssetCode): Dec | undefined {
  try {
    return usdValue(rates, amount, asset);
  } catch (err) {
    if (err instanceof CambioError && err.code === 'RATES_UNAVAILABLE') return undefined;
    throw err;
  }
}
