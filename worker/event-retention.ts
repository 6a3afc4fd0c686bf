import type { Logger } from 'pino';
import type { Orm } from '../db/orm';
import { systemEm } from '../db/orm';
import { purgeEventsBefore } from '../db/repositories/events';
import { every } from './periodic';

// Hourly is plenty for a 30-day retention: an event lives at most an hour past its time.
const PURGE_INTERVAL_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Every worker purges events older than EVENT_RETENTION_DAYS: once at start, then hourly. A timer rather than a
 * Temporal schedule: the purge is one idempotent statement loop with nothing to retry or remember, and several
 * workers purging at once skip each other's rows (db/repositories/events.ts). A failure is logged and the next
 * round tries again.
 */
export function startEventPurge(opts: { orm: Orm; retentionDays: number; log: Logger }): { stop(): Promise<void> } {
  const purge = async () => {
    const cutoff = new Date(Date.now() - opts.retentionDays * DAY_MS);
    const n = await purgeEventsBefore(systemEm(opts.orm), cutoff);
    if (n > 0) opts.log.info({ purged: n, before: cutoff.toISOString() }, 'events past their retention purged');
  };
  return every(PURGE_INTERVAL_MS, purge, {
    runAtStart: true,
    onError: (err) => opts.log.warn({ err }, 'event purge failed; the next round retries'),
  });
}
