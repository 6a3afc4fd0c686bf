import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

// How often a running provider call tells Temporal its worker is alive: well inside the 5 s heartbeat timeout the
// workflows give provider calls (workflows/rail-calls.ts). The SDK sends at most one per 80 % of that timeout.
const HEARTBEAT_EVERY_MS = 1000;

/**
 * The rails' worker heartbeats every activity while it runs, whatever the activity does: a provider call is one
 * HTTP request that cannot report progress, and without heartbeats Temporal would notice a worker that died during
 * one only at the call's start-to-close timeout (30 s), the time a payout or a return then waited to be retried
 * elsewhere. A heartbeat says the process is alive, not that the call progresses: a call that hangs is still ended
 * by its own timeout (PIX_TIMEOUT_MS) or the start-to-close one.
 */
export const railHeartbeats: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    async execute(input, next) {
      const timer = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        return await next(input);
      } finally {
        clearInterval(timer);
      }
    },
  },
});
