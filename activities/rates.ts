import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityDeps } from './deps';
import { rateConnectorsFromConfig } from '../rates';
import { pollRateSource, type PollResult } from '../rates/poll';

/**
 * The rates' poll (workflows/periodic.ts `ratesPollWorkflow`, on the rails' task queue: it calls providers). Every
 * configured source at once, each bounded by RATES_TIMEOUT_MS, so one that hangs costs only its own rows of this run.
 * Idempotent: a row polled twice is stored once (its `received_at` moves, its value is the latest answer's: 0197).
 */
export type RateActivities = ReturnType<typeof createRateActivities>;

export function createRateActivities(deps: ActivityDeps) {
  const connectors = rateConnectorsFromConfig(deps.config);
  return {
    async pollRateSources(): Promise<PollResult[]> {
      const log = Context.current().log;
      // Settled, not all: a source that throws is its own error, and the others' results still count (decision 0164).
      const settled = await Promise.allSettled(
        connectors.map((c) => pollRateSource(deps.orm, c, deps.config.rates.timeoutMs, log)),
      );
      const results = settled.map((s, i): PollResult => {
        if (s.status === 'fulfilled') return s.value;
        const error = s.reason instanceof Error ? s.reason.message : String(s.reason);
        log.warn('rates: source not polled', { source: connectors[i].name, error });
        return { source: connectors[i].name, stored: 0, refused: [], error };
      });
      // The run fails (visible on the schedule) only when no source answered; the next run tries again anyway.
      if (results.length > 0 && results.every((r) => r.error !== undefined)) {
        throw ApplicationFailure.nonRetryable(
          `no rate source answered: ${results.map((r) => `${r.source}: ${r.error}`).join('; ')}`,
          'RatesPollFailed',
        );
      }
      return results;
    },
  };
}
