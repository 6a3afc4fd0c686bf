import { ApplicationFailure } from '@temporalio/activity';
import { RailRejectedError } from '../rails/errors';
import { Context } from '@temporalio/activity';
import type { PayoutRequest, PayoutState, ReturnRequest, ReturnState } from '../rails/rail';
import { reconcileRail, type ReconcileResult } from '../payments/reconciliation';
import { railsFromConfig, type Rails } from '../rails';
import type { ActivityDeps } from './deps';

// Provider calls, run on their own task queue (config.railsTaskQueue): they wait on a PSP, hold no database
// connection and run in no transaction. Each is named by our id (idEnvio), so a retry after a timeout is the same
// payout at the PSP. A PSP that is down or slow throws a plain error (retried with back-off by Temporal); one that
// refuses the request throws RAIL_REJECTED, which no retry would change.

export const RAIL_REJECTED = 'RAIL_REJECTED';

// The in-activity status reads after a payout's PUT (700 ms in all), before the workflow's timers take over.
const SETTLE_READS_MS = [100, 200, 400];
const SETTLE_READS_BUDGET_MS = 2000;

export function createRailActivities(deps: ActivityDeps) {
  let rails: Rails | undefined = deps.rails;
  const pix = () => {
    rails ??= railsFromConfig(deps.config);
    if (!rails.pix) throw ApplicationFailure.nonRetryable('no PSP is configured for PIX', 'RAIL_NOT_CONFIGURED');
    return rails.pix;
  };

  return {
    /**
     * Sends the payout, then reads its status a few times within 700 ms (SETTLE_READS_MS): a PSP settles most payouts
     * in a fraction of a second, and a workflow timer shorter than a second fires about a second late (Temporal
     * does not promise sub-second timers), which made every withdrawal take over a second. A payout still PENDING
     * after that, or a status read that fails, goes back to the workflow, whose reads back off from there.
     */
    async pixSendPayout(request: PayoutRequest): Promise<PayoutState> {
      const started = Date.now();
      let state: PayoutState;
      try {
        state = await pix().sendPayout(request);
      } catch (err) {
        if (err instanceof RailRejectedError) throw ApplicationFailure.nonRetryable(err.message, RAIL_REJECTED);
        throw err;
      }
      for (const wait of SETTLE_READS_MS) {
        // A slow PSP gets no extra reads: the activity stays well inside its timeout (one read is PIX_TIMEOUT_MS).
        if (state.status !== 'PENDING' || Date.now() - started > SETTLE_READS_BUDGET_MS) break;
        await Context.current().sleep(wait);
        const read = await pix()
          .payoutStatus(request.payoutId)
          .catch(() => undefined);
        if (!read) break;
        state = read;
      }
      return state;
    },

    /** Retried whatever the PSP answers: while the payout's fate is unknown, money may still leave. */
    async pixPayoutStatus(input: { payoutId: string }): Promise<PayoutState> {
      return pix().payoutStatus(input.payoutId);
    },

    /** Asks the PSP to send a payment back, under our return id (a retry reads the same return back). */
    async pixReturnPayment(request: ReturnRequest): Promise<ReturnState> {
      try {
        return await pix().returnPayment(request);
      } catch (err) {
        if (err instanceof RailRejectedError) throw ApplicationFailure.nonRetryable(err.message, RAIL_REJECTED);
        throw err;
      }
    },

    /** Retried whatever the PSP answers: a return in flight may still send the money back. */
    async pixReturnStatus(input: { endToEndId: string; returnId: string }): Promise<ReturnState> {
      return pix().returnStatus(input.endToEndId, input.returnId);
    },

    /**
     * One reconciliation run of PIX (the schedule's workflow runs it here, on the rails' queue): `GET /pix` over the
     * window since the last run, every page, then each payment recorded and decided as a notice's would be. It
     * heartbeats per payment, so a worker lost mid-run is noticed quickly; a retry does the window again, harmlessly.
     */
    async reconcilePixReceived(): Promise<ReconcileResult> {
      const ctx = Context.current();
      const settle = { orm: deps.orm, temporal: deps.temporal, config: deps.config };
      const result = await reconcileRail(settle, pix(), {
        firstFrom: deps.config.pix.reconcileFrom,
        onProgress: () => ctx.heartbeat(),
        onFailure: (endToEndId, err) =>
          ctx.log.warn('reconciliation could not record a payment; the next run lists it again', {
            endToEndId,
            error: err instanceof Error ? err.message : String(err),
          }),
      });
      if (result.late > 0) ctx.log.warn('reconciliation found payments no notice brought', { ...result });
      return result;
    },
  };
}
