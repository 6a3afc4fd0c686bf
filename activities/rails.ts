import { ApplicationFailure, Context } from '@temporalio/activity';
import { CambioError } from '../domain/errors';
import { RailRejectedError, RailUnavailableError } from '../rails/errors';
import type { PayoutRequest, PayoutState, ReturnRequest, ReturnState, TimeWindow } from '../rails/rail';
import { reconcileRail, type ReconcileResult } from '../payments/reconciliation';
import { railsFromConfig, type Rails } from '../rails';
import { pixRail } from '../rails/pix';
import type { RailConnector } from '../rails/rail';
import { chargeField, railEntry } from '../rails/registry';
import { systemEm } from '../db/orm';
import { depositOfCharge, type ChargeField } from '../db/repositories/operations';
import type { ActivityDeps } from './deps';
import { railStores } from './rail-stores';

// Provider calls, run on their own task queue (config.railsTaskQueue): they wait on a PSP, hold no database
// connection and run in no transaction. Each names its rail and finds the rail's connector in the registry
// (rails/registry.ts); the pix* activities are the names workflows recorded before decision 0118, kept as aliases
// of the generic ones so those histories replay and their pending activities still run. Each is named by our id
// (idEnvio), so a retry after a timeout is the same payout at the PSP. A PSP that is down or slow throws a plain error
// (retried with back-off by Temporal); one that refuses the request throws RAIL_REJECTED, which no retry would
// change.

export const RAIL_REJECTED = 'RAIL_REJECTED';
export const RAIL_NOT_CONFIGURED = 'RAIL_NOT_CONFIGURED';

// The in-activity status reads after a payout's PUT (700 ms in all), before the workflow's timers take over.
const SETTLE_READS_MS = [100, 200, 400];
const SETTLE_READS_BUDGET_MS = 2000;

/** The details of a RAIL_REJECTED failure: what the customer may be told of the refusal, when the rail can tell. */
export interface RefusalForCustomer {
  forCustomer?: string;
}

export type RailCall<T> = T & {
  /** The rail as operations name it (`PIX_KEY`): its connector is the registry's. */
  rail: string;
};

type Capability = 'payouts' | 'returns' | 'listing' | 'charges';

/** The provider calls, by rail (and PIX's aliases): what workflows/rail-calls.ts proxies. */
export type RailActivities = ReturnType<typeof createRailActivities>;

export function createRailActivities(deps: ActivityDeps) {
  let rails: Rails | undefined = deps.rails;
  /**
   * The capability of `rail`'s connector on this worker. A worker without a provider for the rail refuses for good
   * (non-retryable RAIL_NOT_CONFIGURED) only the first attempt of a first call, when nothing can have been sent
   * (`firstSend`): the workflow then fails the payout or return. Anywhere else an earlier attempt, or an earlier
   * call, may have reached a provider and money may still leave, so the call is retried until a worker with a
   * provider takes it.
   */
  const connector = <K extends Capability>(rail: string, kind: K, firstSend = false): NonNullable<RailConnector[K]> => {
    rails ??= railsFromConfig(deps.config, undefined, railStores(deps.orm, deps.temporal, deps.config));
    const found = rails.connector(rail)?.[kind];
    if (found) return found as NonNullable<RailConnector[K]>;
    const setting = railEntry(rail)?.providerSetting;
    const message = `no PSP is configured for ${rail} on this worker${setting ? ` (${setting})` : ''}`;
    if (firstSend && Context.current().info.attempt === 1) {
      throw ApplicationFailure.nonRetryable(`${message}: nothing was sent`, RAIL_NOT_CONFIGURED);
    }
    throw ApplicationFailure.retryable(`${message}; an earlier call may have reached a PSP`, RAIL_NOT_CONFIGURED);
  };
  /**
   * A provider's final refusal (nothing was created) is RAIL_REJECTED, which no retry would change. Its message is
   * the operator's (the provider's words); its details, what the customer may be told (decision 0278).
   */
  const finalRefusal = (err: unknown): never => {
    if (err instanceof RailRejectedError) {
      const told: RefusalForCustomer = err.forCustomer ? { forCustomer: err.forCustomer } : {};
      throw ApplicationFailure.nonRetryable(err.message, RAIL_REJECTED, told);
    }
    throw err;
  };
  /**
   * A payout the connector cannot make with this configuration (CRYPTO: no contract for its stablecoin), which it
   * says only before anything was ordered (decision 0209): RAIL_NOT_CONFIGURED, final, as a worker without the rail's
   * provider; retried, it would wait PROCESSING for ever with the money held.
   */
  const payoutNotConfigured = (err: unknown): never => {
    if (err instanceof CambioError && err.code === RAIL_NOT_CONFIGURED) {
      throw ApplicationFailure.nonRetryable(`${err.message}: nothing was sent`, RAIL_NOT_CONFIGURED);
    }
    throw err;
  };
  /**
   * A provider's refusal of a first send is final only on its first attempt (decision 0159). A later attempt follows
   * one whose call may have reached the provider (its answer lost, or its worker lost mid-call), and a provider may
   * refuse a repeated id while its read side does not show the first call yet: like a follow's (decision 0121), that
   * refusal is retried, and the payout or return stays pending, never FAILED with its money released on a guess. A
   * connector's own check of the request (`beforeAnyCall`) is final on any attempt.
   */
  const sendRefusal = (err: unknown): never => {
    if (err instanceof RailRejectedError && !err.beforeAnyCall && Context.current().info.attempt > 1) {
      throw new RailUnavailableError(
        `an earlier attempt may have reached the provider, which now refuses: ${err.message}`,
      );
    }
    return finalRefusal(err);
  };

  /**
   * "Not made" of a first send, on a later attempt, is final only when the provider shows it under our id (decision
   * 0327): an earlier attempt's call may have reached the provider (its answer lost), and a provider that answers the
   * repeated id "not made" while its read side does not show the first yet may still pay it, as with a refusal
   * (sendRefusal). `read` is the provider's state under the id; one it does not give now leaves the call pending.
   */
  const notMadeOnRetry = async <S extends { status: string }>(state: S, read: () => Promise<S>): Promise<S> => {
    if (state.status !== 'FAILED' || Context.current().info.attempt === 1) return state;
    const shown = await read().catch(() => undefined);
    if (shown) return shown;
    throw new RailUnavailableError(
      'an earlier attempt may have reached the provider, which answers this one "not made" and shows nothing under ' +
        'its id: it stays pending',
    );
  };

  const generic = {
    /**
     * Sends the payout, then reads its status a few times within 700 ms (SETTLE_READS_MS): a PSP settles most payouts
     * in a fraction of a second, and a workflow timer shorter than a second fires about a second late (Temporal
     * does not promise sub-second timers), which made every withdrawal take over a second. A payout still PENDING
     * after that, or a status read that fails, goes back to the workflow, whose reads back off from there.
     */
    async railSendPayout({ rail, ...request }: RailCall<PayoutRequest>): Promise<PayoutState> {
      const started = Date.now();
      const payouts = connector(rail, 'payouts', true);
      let state = await payouts
        .sendPayout(request)
        .then((sent) => notMadeOnRetry(sent, () => payouts.payoutStatus(request.payoutId)))
        .catch(sendRefusal)
        .catch(payoutNotConfigured);
      for (const wait of SETTLE_READS_MS) {
        // A slow PSP gets no extra reads: the activity stays well inside its timeout (one read is PIX_TIMEOUT_MS).
        if (state.status !== 'PENDING' || Date.now() - started > SETTLE_READS_BUDGET_MS) break;
        await Context.current().sleep(wait);
        const read = await connector(rail, 'payouts')
          .payoutStatus(request.payoutId)
          .catch(() => undefined);
        if (!read) break;
        state = read;
      }
      return state;
    },

    /**
     * Withdrawals started before decision 0108: retried whatever the PSP answers (a 404 too, for ever: those
     * workflows continue as new into railFollowPayout once their history is long).
     */
    async railPayoutStatus({ rail, payoutId }: RailCall<{ payoutId: string }>): Promise<PayoutState> {
      return connector(rail, 'payouts').payoutStatus(payoutId);
    },

    /**
     * A pending payout read again; one the PSP does not show is sent again under its idEnvio (decision 0108). A
     * refusal of that PUT with nothing under the idEnvio is the PSP's final answer (RAIL_REJECTED); anything else
     * that cannot tell is retried: while the payout's fate is unknown, money may still leave.
     */
    async railFollowPayout({ rail, ...request }: RailCall<PayoutRequest>): Promise<PayoutState> {
      return connector(rail, 'payouts').followPayout(request).catch(finalRefusal).catch(payoutNotConfigured);
    },

    /** Asks the PSP to send a payment back, under our return id (a retry reads the same return back). */
    async railReturnPayment({ rail, ...request }: RailCall<ReturnRequest>): Promise<ReturnState> {
      const returns = connector(rail, 'returns', true);
      return returns
        .returnPayment(request)
        .then((sent) => notMadeOnRetry(sent, () => returns.returnStatus(request.endToEndId, request.returnId)))
        .catch(sendRefusal);
    },

    /** Returns started before decision 0108: retried whatever the PSP answers. */
    async railReturnStatus({
      rail,
      endToEndId,
      returnId,
    }: RailCall<{ endToEndId: string; returnId: string }>): Promise<ReturnState> {
      return connector(rail, 'returns').returnStatus(endToEndId, returnId);
    },

    /** A pending return read again; one the PSP does not show is asked again under its id (as railFollowPayout). */
    async railFollowReturn({ rail, ...request }: RailCall<ReturnRequest>): Promise<ReturnState> {
      return connector(rail, 'returns').followReturn(request).catch(finalRefusal);
    },

    /**
     * Cancels a deposit's charge whose window closed unpaid (payments/charge-cancel.ts started it): idempotent at the
     * provider, so a retry after a lost answer is harmless; a provider's final refusal is RAIL_REJECTED.
     */
    async railCancelCharge({
      rail,
      chargeId,
      reason,
      unlessCarried,
    }: RailCall<{ chargeId: string; reason: string; unlessCarried?: boolean }>): Promise<string> {
      const charges = connector(rail, 'charges');
      if (!charges.cancelCharge) return 'NOT_SUPPORTED';
      // A charge whose request was refused is a deposit's after all when the same key's other request created it.
      const field = chargeField(rail) as ChargeField;
      if (unlessCarried && (await depositOfCharge(systemEm(deps.orm), chargeId, field))) return 'CARRIED';
      const outcome = await charges.cancelCharge(chargeId, reason).catch(finalRefusal);
      Context.current().log.info('charge of an unpaid deposit cancelled at its provider', { rail, chargeId, outcome });
      return outcome;
    },

    /**
     * One reconciliation run of a rail (the schedule's workflow runs it here, on the rails' queue): everything the
     * provider lists over the window since the last run, every page, then each payment recorded and decided as a
     * notice's would be. It heartbeats per payment, so a worker lost mid-run is noticed quickly; a retry does the
     * window again, harmlessly.
     */
    async railReconcile({ rail }: { rail: string }): Promise<ReconcileResult> {
      const ctx = Context.current();
      const settle = { orm: deps.orm, temporal: deps.temporal, config: deps.config };
      const listing = connector(rail, 'listing');
      const source = { rail, listReceived: (window: TimeWindow) => listing.listReceived(window) };
      const result = await reconcileRail(settle, source, {
        firstFrom: railEntry(rail)?.reconciliation?.from(deps.config),
        onProgress: () => ctx.heartbeat(),
        onFailure: (endToEndId, err) =>
          ctx.log.warn('reconciliation could not record a payment; the next run lists it again', {
            endToEndId,
            error: err instanceof Error ? err.message : String(err),
          }),
        // The first record stands; the difference is at the provider and in no record (decisions 0303, 0356).
        onDisagreement: (endToEndId, disagrees) =>
          ctx.log.error('a payment is recorded otherwise than its provider lists it; an operator settles it', {
            endToEndId,
            disagrees,
          }),
      });
      // A window the provider refused: listed shorter, the rest left to the next runs (decision 0279).
      if (result.narrowedFrom) {
        ctx.log.warn('the provider refused the reconciliation window; a shorter one was listed', { ...result });
      }
      // Late only where notices exist: a rail that only lists (TED) records everything this way.
      if (result.late > 0 && railEntry(rail)?.notices) {
        ctx.log.warn('reconciliation found payments no notice brought', { ...result });
      }
      return result;
    },
  };

  // The names workflows recorded before the generic activities (decision 0118): PIX's calls, kept for their histories.
  const PIX = pixRail.rail;
  const aliases = {
    pixSendPayout: (request: PayoutRequest) => generic.railSendPayout({ rail: PIX, ...request }),
    pixPayoutStatus: (input: { payoutId: string }) => generic.railPayoutStatus({ rail: PIX, ...input }),
    pixFollowPayout: (request: PayoutRequest) => generic.railFollowPayout({ rail: PIX, ...request }),
    pixReturnPayment: (request: ReturnRequest) => generic.railReturnPayment({ rail: PIX, ...request }),
    pixReturnStatus: (input: { endToEndId: string; returnId: string }) =>
      generic.railReturnStatus({ rail: PIX, ...input }),
    pixFollowReturn: (request: ReturnRequest) => generic.railFollowReturn({ rail: PIX, ...request }),
    reconcilePixReceived: () => generic.railReconcile({ rail: PIX }),
  };
  return { ...generic, ...aliases };
}
