import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { SqlBatch } from '../../db/batch';
import type { Em } from '../../db/orm';
import { amount } from '../../domain/amount';
import type { AssetCode } from '../../domain/assets';
import { formatAmount } from '../../domain/money';
import { railsFromConfig } from '../../rails';
import { payoutIdFor } from '../../rails/pix/ids';
import type { PayoutRequest } from '../../rails/rail';
import { railTransactionType } from '../../rails/registry';
import type { ActivityDeps } from '../deps';
import { inActivityTransaction } from '../failures';
import { lockOperation, saveOperation } from './locked-operation';

/** A withdrawal's payout: what to send and on which queue, or the PSP's answer already recorded. */
export type PayoutOrder =
  | { recorded: { ok: boolean; endToEnd: string }; taskQueue?: undefined; request?: undefined }
  | {
      recorded?: undefined;
      taskQueue: string;
      /** The beneficiary's rail (absent from orders that histories recorded before decision 0118: PIX's then). */
      rail: string;
      request: PayoutRequest;
    };

/** A withdrawal's own database steps around its payout (the provider's calls are activities/rails.ts). */
export type WithdrawalActivities = ReturnType<typeof createWithdrawalActivities>;

/**
 * The payout's order and record, each one transaction holding the operation's row lock: the order names the same
 * payout on every retry and replay, and the first answer recorded stays.
 */
export function createWithdrawalActivities(deps: ActivityDeps) {
  const inTx = <T>(fn: (em: Em) => Promise<T>) => inActivityTransaction(deps.orm, fn);
  let rails = deps.rails;

  const steps = {
    /**
     * What the payout sends: its idEnvio (from the operation, so every retry and replay names the same payout),
     * amount and key, and the task queue of provider calls; or the outcome already recorded.
     */
    async payoutOrder(input: { operationId: string }): Promise<PayoutOrder> {
      return inTx(async (em) => {
        const op = await lockOperation(em, input.operationId);
        const recorded = op.transactions.find((t) => t.direction === 'DEBIT');
        if (recorded) return { recorded: { ok: recorded.status === 'COMPLETED', endToEnd: recorded.endToEnd } };
        const instruction = (
          op.intent.beneficiary as { paymentInstruction: { rail: string; key: string; network?: string } }
        ).paymentInstruction;
        return {
          taskQueue: deps.config.railsTaskQueue,
          rail: instruction.rail,
          request: {
            payoutId: payoutIdFor(op.id),
            amount: formatAmount(op.targetAmount, op.targetAsset as AssetCode),
            key: instruction.key,
            // CRYPTO pays in several stablecoins: the connector needs which (decision 0134).
            asset: op.targetAsset,
            // A WALLET is paid on the chain it was reviewed for or not at all (decisions 0210, 0241).
            ...(instruction.network ? { network: instruction.network } : {}),
          },
        };
      });
    },

    /**
     * Records the PSP's final answer on the operation as its rail's transaction: COMPLETED with the end-to-end id
     * of the money that left, or FAILED with the reason. The first answer recorded stays (a retry reads it).
     */
    async recordPayout(input: {
      operationId: string;
      status: 'COMPLETED' | 'FAILED';
      endToEnd?: string;
      reason?: string;
    }): Promise<{ ok: boolean; endToEnd: string }> {
      return inTx(async (em) => {
        const op = await lockOperation(em, input.operationId);
        const existing = op.transactions.find((t) => t.direction === 'DEBIT');
        if (existing) return { ok: existing.status === 'COMPLETED', endToEnd: existing.endToEnd };
        const ok = input.status === 'COMPLETED';
        const at = new Date();
        const endToEnd = input.endToEnd ?? '';
        op.transactions = [
          ...op.transactions,
          {
            id: randomUUID(),
            type: railTransactionType(
              (op.intent.beneficiary as { paymentInstruction: { rail: string } }).paymentInstruction.rail,
            ),
            direction: 'DEBIT',
            amount: amount(op.targetAmount, op.targetAsset),
            status: ok ? 'COMPLETED' : 'FAILED',
            endToEnd,
            createdAt: at.toISOString(),
            ...(ok ? {} : { reason: 'PAYOUT_REJECTED' }),
          },
        ];
        op.updatedAt = at;
        const batch = new SqlBatch();
        saveOperation(batch, op);
        await batch.run(em);
        return { ok, endToEnd };
      });
    },

    /**
     * The payout step of withdrawals started before payouts went through the rails' task queue: the same PSP
     * calls, in one activity. It records only a final answer of the PSP; while the payout is pending it fails
     * (retryable), and Temporal runs it again, which re-reads the same idEnvio.
     */
    async executePayout(input: { operationId: string }): Promise<{ ok: boolean; endToEnd: string }> {
      const order = await steps.payoutOrder(input);
      if (order.recorded) return order.recorded;
      rails ??= railsFromConfig(deps.config);
      const payouts = rails.connector(order.rail)?.payouts;
      if (!payouts)
        throw ApplicationFailure.nonRetryable(`no provider is configured for ${order.rail}`, 'RAIL_NOT_CONFIGURED');
      let state = await payouts.sendPayout(order.request);
      for (let i = 0; state.status === 'PENDING' && i < 20; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        state = await payouts.payoutStatus(order.request.payoutId);
      }
      if (state.status === 'PENDING') throw new Error(`payout ${state.payoutId} is still pending at the PSP`);
      return steps.recordPayout({ ...input, status: state.status, endToEnd: state.endToEndId, reason: state.reason });
    },
  };
  return steps;
}
