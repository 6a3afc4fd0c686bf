import { ApplicationFailure, Context } from '@temporalio/activity';
import { RailRejectedError } from '../rails/errors';
import type { PayoutRequest, PayoutState, ReturnRequest, ReturnState } from '../rails/rail';
import { reconcileRail, type ReconcileResult } from '../payments/reconciliation';
import { railsFromConfig, type Rails } from '../rails';
import type { ActivityDeps } from './deps';

// Provider calls, run on their own task queue (config.railsTaskQueue): they wait on a PSP, hold no database
// connection and run in no transaction. Each is named by our id (idEnvio), so a retry after a timeout is the same
// payout at the PSP. A PSP that is down or slow throws a plain error (retried with back-off by Temporal); one that
// refuses the request throws RAIL_REJECTED, which no retry would change.

export const RAIL_REJECTED = 'RAIL_REJECTED';
export const RAIL_NOT_CONFIGURED = 'RAIL_NOT_CONFIGURED';

// The in-activity status reads after a payout's PUT (700 ms in all), before the workflow's timers take over.
const SETTLE_READS_MS = [100, 200, 400];
const SETTLE_READS_BUDGET_MS = 2000;

export function createRailActivities(deps: ActivityDeps) {
  let rails: Rails | undefined = deps.rails;
  /**
   * The PIX connector of this worker. A worker without a PSP refuses for good (non-retryable RAIL_NOT_CONFIGURED)
   * only the first attempt of a first call, when nothing can have been sent (`firstSend`): the workflow then fails
   * the payout or return. Anywhere else an earlier attempt, or an earlier call, may have reached a PSP and money may
   * still leave, so the call is retried until a worker with a PSP takes it.
   */
  const pix = (firstSend = false) => {
    rails ??= railsFromConfig(deps.config);
    if (rails.pix) return rails.pix;
    const message = 'no PSP is configured for PIX on this worker (PIX_PSP_URL)';
    if (firstSend && Context.current().info.attempt === 1) {
      throw ApplicationFailure.nonRetryable(`${message}: nothing was sent`, RAIL_NOT_CONFIGURED);
    }
    throw ApplicationFailure.retryable(`${message}; an earlier call may have reached a PSP`, RAIL_NOT_CONFIGURED);
  };
  /** A provider's final refusal (nothing was created) is RAIL_REJECTED, which no retry would change. */
  const finalRefusal = (err: unknown): never => {
    if (err instanceof RailRejectedError) throw ApplicationFailure.nonRetryable(err.message, RAIL_REJECTED);
    throw err;
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
      let state = await pix(true).sendPayout(request).catch(finalRefusal);
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

    /**
     * Withdrawals started before decision 0108: retried whatever the PSP answers (a 404 too, for ever: those
     * workflows continue as new into pixFollowPayout once their history is long).
     */
    async pixPayoutStatus(input: { payoutId: string }): Promise<PayoutState> {
      return pix().payoutStatus(input.payoutId);
    },

    /**
     * A pending payout read again; one the PSP does not show is sent again under its idEnvio (decision 0108). A
     * refusal of that PUT with nothing under the idEnvio is the PSP's final answer (RAIL_REJECTED); anything else
     * that cannot tell is retried: while the payout's fate is unknown, money may still leave.
     */
    async pixFollowPayout(request: PayoutRequest): Promise<PayoutState> {
      return pix().followPayout(request).catch(finalRefusal);
    },

    /** Asks the PSP to send a payment back, under our return id (a retry reads the same return back). */
    async pixReturnPayment(request: ReturnRequest): Promise<ReturnState> {
      return pix(true).returnPayment(request).catch(finalRefusal);
    },

    /** Returns started before decision 0108: retried whatever the PSP answers. */
    async pixReturnStatus(input: { endToEndId: string; returnId: string }): Promise<ReturnState> {
      return pix().returnStatus(input.endToEndId, input.returnId);
    },

    /** A pending return read again; one the PSP does not show is asked again under its id (as pixFollowPayout). */
    async pixFollowReturn(request: ReturnRequest): Promise<ReturnState> {
      return pix().followReturn(request).catch(finalRefusal);
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
