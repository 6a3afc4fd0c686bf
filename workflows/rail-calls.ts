// How a workflow calls a rail's provider (rails/): activities on the provider's own task queue, so a slow PSP never
// takes the slots that settle money, retried without end (a PSP down for an hour delays the call by an hour, never
// loses it), each bounded by PIX_TIMEOUT_MS (10 s by default) and its token fetch. The rails' worker heartbeats
// every call while it runs (worker/rail-heartbeats.ts): a worker lost during one is noticed after the heartbeat
// timeout, and the call retried elsewhere under the same id, instead of after the 30 s start-to-close timeout.
import * as wf from '@temporalio/workflow';
import type { RailActivities, RefusalForCustomer } from '../activities/rails';
import type { PayoutRequest, ReturnRequest } from '../rails/rail';

export const railActivities = (taskQueue: string) =>
  wf.proxyActivities<RailActivities>({
    taskQueue,
    startToCloseTimeout: '30s',
    heartbeatTimeout: '5s',
    retry: { initialInterval: '1s', maximumInterval: '60s', backoffCoefficient: 2 },
  });

// Workflows from here on call the generic rail activities (railSendPayout, ...) naming their rail (decision 0118);
// histories recorded before replay the PIX names they called (pixSendPayout, ...), which stay registered as aliases.
export const GENERIC_RAIL_ACTIVITIES = 'generic-rail-activities';

/**
 * The provider calls of one payout or return on `rail`: the generic activities, or PIX's names for a workflow
 * recorded before they existed (or an order recorded without its rail, which was PIX's). Asked once per call site,
 * before its first provider call.
 */
export function railCalls(taskQueue: string, rail: string | undefined) {
  const a = railActivities(taskQueue);
  if (rail && wf.patched(GENERIC_RAIL_ACTIVITIES)) {
    return {
      sendPayout: (r: PayoutRequest) => a.railSendPayout({ rail, ...r }),
      payoutStatus: (r: { payoutId: string }) => a.railPayoutStatus({ rail, ...r }),
      followPayout: (r: PayoutRequest) => a.railFollowPayout({ rail, ...r }),
      returnPayment: (r: ReturnRequest) => a.railReturnPayment({ rail, ...r }),
      returnStatus: (r: { endToEndId: string; returnId: string }) => a.railReturnStatus({ rail, ...r }),
      followReturn: (r: ReturnRequest) => a.railFollowReturn({ rail, ...r }),
    };
  }
  return {
    sendPayout: a.pixSendPayout,
    payoutStatus: a.pixPayoutStatus,
    followPayout: a.pixFollowPayout,
    returnPayment: a.pixReturnPayment,
    returnStatus: a.pixReturnStatus,
    followReturn: a.pixFollowReturn,
  };
}

/** The provider refused the call outright (RAIL_REJECTED): nothing was sent. Null for any other failure. */
export function railRejection(err: unknown): wf.ApplicationFailure | null {
  return railFailure(err, 'RAIL_REJECTED');
}

/** What the customer may be told of a RAIL_REJECTED refusal (decision 0278); undefined when the rail cannot tell. */
export function refusalForCustomer(refused: wf.ApplicationFailure): string | undefined {
  const told = refused.details?.[0] as RefusalForCustomer | undefined;
  return typeof told?.forCustomer === 'string' ? told.forCustomer : undefined;
}

/**
 * The worker that took the first call has no provider for the rail (RAIL_NOT_CONFIGURED, raised only by a first
 * attempt, before anything was sent). Null for any other failure.
 */
export function railNotConfigured(err: unknown): wf.ApplicationFailure | null {
  return railFailure(err, 'RAIL_NOT_CONFIGURED');
}

function railFailure(err: unknown, type: string): wf.ApplicationFailure | null {
  const cause = err instanceof wf.ActivityFailure && err.cause instanceof wf.ApplicationFailure ? err.cause : null;
  return cause?.type === type ? cause : null;
}

// Status reads of a pending provider call back off from this to the cap: a PSP settles most payouts and returns
// within seconds, a few take hours.
export const FIRST_STATUS_READ_MS = 250;
export const MAX_STATUS_READ_MS = 60_000;

/** The pause before each status read of one pending call: 250 ms, doubling at each read, up to a minute. */
export function statusReadPauses(): () => Promise<void> {
  let wait = FIRST_STATUS_READ_MS;
  return async () => {
    await wf.sleep(wait);
    wait = Math.min(wait * 2, MAX_STATUS_READ_MS);
  };
}

/**
 * statusReadPauses for a call that may continue as new: waits `waitMs` (from FIRST_STATUS_READ_MS on a first run,
 * from where the last run was on a continued one) and returns the next pause.
 */
export async function statusReadPause(waitMs = FIRST_STATUS_READ_MS): Promise<number> {
  await wf.sleep(waitMs);
  return Math.min(waitMs * 2, MAX_STATUS_READ_MS);
}

/**
 * A history past this many events continues as new, whatever the server suggests (decision 0109). Temporal
 * suggests it at 4 Ki events (or 4 MiB) by default and terminates a workflow at 51,200 events. A call pending at
 * the provider, read once a minute, adds about eight events a minute (a timer, an activity, a workflow task):
 * about four and a half days to the limit, about eight hours to this bound, which is the server's default
 * suggestion and holds on a server that suggests nothing (the time-skipping test server).
 */
export const MAX_HISTORY_EVENTS = 4096;

// Workflows waiting on a provider continue as new once their history is long (decision 0109). Recorded only when
// they do, so a history that never grew that long replays without it.
export const PENDING_CALLS_CONTINUE_AS_NEW = 'pending-provider-calls-continue-as-new';

/**
 * Whether a workflow that waits on a provider should continue as new now: its history is long (the server suggests
 * it, or MAX_HISTORY_EVENTS) and the workflow runs code that does (the patch, asked only then: histories recorded
 * before it was written replay as they ran).
 */
export function timeToContinueAsNew(): boolean {
  const info = wf.workflowInfo();
  const long = info.continueAsNewSuggested || info.historyLength >= MAX_HISTORY_EVENTS;
  return long && wf.patched(PENDING_CALLS_CONTINUE_AS_NEW);
}
