// How a workflow calls a rail's provider (rails/): activities on the provider's own task queue, so a slow PSP never
// takes the slots that settle money, retried without end (a PSP down for an hour delays the call by an hour, never
// loses it), each bounded by PIX_TIMEOUT_MS (10 s by default) and its token fetch.
import * as wf from '@temporalio/workflow';
import type { Activities } from '../activities';

export const railActivities = (taskQueue: string) =>
  wf.proxyActivities<Activities>({
    taskQueue,
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', maximumInterval: '60s', backoffCoefficient: 2 },
  });

/** The provider refused the call outright (RAIL_REJECTED): nothing was sent. Null for any other failure. */
export function railRejection(err: unknown): wf.ApplicationFailure | null {
  const cause = err instanceof wf.ActivityFailure && err.cause instanceof wf.ApplicationFailure ? err.cause : null;
  return cause?.type === 'RAIL_REJECTED' ? cause : null;
}
