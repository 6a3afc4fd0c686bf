// How a workflow calls a rail's provider (rails/): activities on the provider's own task queue, so a slow PSP never
// takes the slots that settle money, retried without end (a PSP down for an hour delays the call by an hour, never
// loses it), each bounded by PIX_TIMEOUT_MS (10 s by default) and its token fetch. The rails' worker heartbeats
// every call while it runs (worker/rail-heartbeats.ts): a worker lost during one is noticed after the heartbeat
// timeout, and the call retried elsewhere under the same id, instead of after the 30 s start-to-close timeout.
import * as wf from '@temporalio/workflow';
import type { Activities } from '../activities';

export const railActivities = (taskQueue: string) =>
  wf.proxyActivities<Activities>({
    taskQueue,
    startToCloseTimeout: '30s',
    heartbeatTimeout: '5s',
    retry: { initialInterval: '1s', maximumInterval: '60s', backoffCoefficient: 2 },
  });

/** The provider refused the call outright (RAIL_REJECTED): nothing was sent. Null for any other failure. */
export function railRejection(err: unknown): wf.ApplicationFailure | null {
  const cause = err instanceof wf.ActivityFailure && err.cause instanceof wf.ApplicationFailure ? err.cause : null;
  return cause?.type === 'RAIL_REJECTED' ? cause : null;
}

// Status reads of a pending provider call back off from this to the cap: a PSP settles most payouts and returns
// within seconds, a few take hours.
const FIRST_STATUS_READ_MS = 250;
const MAX_STATUS_READ_MS = 60_000;

/** The pause before each status read of one pending call: 250 ms, doubling at each read, up to a minute. */
export function statusReadPauses(): () => Promise<void> {
  let wait = FIRST_STATUS_READ_MS;
  return async () => {
    await wf.sleep(wait);
    wait = Math.min(wait * 2, MAX_STATUS_READ_MS);
  };
}
