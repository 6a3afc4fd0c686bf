import type { Orm } from '../db/orm';
import { systemEm } from '../db/orm';
import { purgeEventsBefore } from '../db/repositories/events';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Purges events older than EVENT_RETENTION_DAYS; the event purge schedule runs it hourly (worker/schedules.ts),
 * plenty for a 30-day retention. One idempotent statement loop: a retry or an overlapping run skips rows another
 * purge took (db/repositories/events.ts). Returns how many went.
 */
export async function purgeExpiredEvents(orm: Orm, retentionDays: number): Promise<number> {
  return purgeEventsBefore(systemEm(orm), new Date(Date.now() - retentionDays * DAY_MS));
}
