import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { purgeExpiredEvents } from '../webhooks/event-retention';
import { sweepInboundPayments } from '../payments/inbound-payment-sweep';
import { issueStatements } from '../statements/issue';
import { systemEm } from '../db/orm';
import { purgeExpiredKeys } from '../db/repositories/idempotency';

/** The periodic jobs' own activities (the rails' reconciliation and the rates' poll are their groups'). */
export type PeriodicActivities = ReturnType<typeof createPeriodicActivities>;

/** The periodic jobs' activities (workflows/periodic.ts). Each is idempotent: a retry or a second run is harmless. */
export function createPeriodicActivities(deps: ActivityDeps) {
  return {
    async purgeExpiredEvents(): Promise<number> {
      return purgeExpiredEvents(deps.orm, deps.config.eventRetentionDays);
    },
    /** The rows of idempotency keys past their 24 h (decision 0167): nothing else ever deletes them. */
    async purgeExpiredIdempotencyKeys(): Promise<number> {
      return purgeExpiredKeys(systemEm(deps.orm));
    },
    async sweepInboundPayments(): Promise<void> {
      const result = await sweepInboundPayments(deps, (paymentId, err) =>
        Context.current().log.warn('inbound payment could not be decided; the next run retries', {
          paymentId,
          error: err instanceof Error ? err.message : String(err),
        }),
      );
      if (result.failed > 0) Context.current().log.warn('inbound payment sweep: some payments failed', { ...result });
    },
    async issueStatementsOfPeriod(interval: string, at: string) {
      const config = { statementInterval: interval, webhookTaskQueue: deps.config.webhookTaskQueue };
      return issueStatements({ orm: deps.orm, config }, new Date(at), (detail) => Context.current().heartbeat(detail));
    },
  };
}
