import type { Logger } from 'pino';

/**
 * Runs `attempt` again while it fails because a dependency cannot be reached (`unreachable` names it, or returns
 * undefined for any other failure, which is thrown): 1 s between tries, doubling to 5 s, with a warning each time
 * saying what is missing and what the process does `meanwhile`. An attempt that fails closes what it opened. Undefined
 * once `stopping` says so. A process started during an outage waits in place instead of exiting into its
 * supervisor's back-off: the API (decision 0103) and the worker (decision 0105).
 */
export async function untilReachable<T>(
  attempt: () => Promise<T>,
  opts: {
    log: Logger;
    unreachable: (err: unknown) => string | undefined;
    meanwhile: string;
    stopping?: () => boolean;
  },
): Promise<T | undefined> {
  for (let pauseMs = 1000; !opts.stopping?.(); pauseMs = Math.min(pauseMs * 2, 5000)) {
    try {
      return await attempt();
    } catch (err) {
      const missing = opts.unreachable(err);
      if (!missing) throw err;
      opts.log.warn({ err: String(err), retryInMs: pauseMs }, `${missing} cannot be reached: ${opts.meanwhile}`);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
  return undefined;
}
