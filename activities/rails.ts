import { ApplicationFailure } from '@temporalio/activity';
import { RailRejectedError } from '../rails/errors';
import type { PayoutRequest, PayoutState } from '../rails/rail';
import { railsFromConfig, type Rails } from '../rails';
import type { ActivityDeps } from './deps';

// Provider calls, run on their own task queue (config.railsTaskQueue): they wait on a PSP, hold no database
// connection and run in no transaction. Each is named by our id (idEnvio), so a retry after a timeout is the same
// payout at the PSP. A PSP that is down or slow throws a plain error (retried with back-off by Temporal); one that
// refuses the request throws RAIL_REJECTED, which no retry would change.

export const RAIL_REJECTED = 'RAIL_REJECTED';

export function createRailActivities(deps: ActivityDeps) {
  let rails: Rails | undefined = deps.rails;
  const pix = () => {
    rails ??= railsFromConfig(deps.config);
    if (!rails.pix) throw ApplicationFailure.nonRetryable('no PSP is configured for PIX', 'RAIL_NOT_CONFIGURED');
    return rails.pix;
  };

  return {
    async pixSendPayout(request: PayoutRequest): Promise<PayoutState> {
      try {
        return await pix().sendPayout(request);
      } catch (err) {
        if (err instanceof RailRejectedError) throw ApplicationFailure.nonRetryable(err.message, RAIL_REJECTED);
        throw err;
      }
    },

    /** Retried whatever the PSP answers: while the payout's fate is unknown, money may still leave. */
    async pixPayoutStatus(input: { payoutId: string }): Promise<PayoutState> {
      return pix().payoutStatus(input.payoutId);
    },
  };
}
