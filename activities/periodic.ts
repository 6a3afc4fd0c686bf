import { Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import { purgeExpiredEvents } from '../worker/event-retention';
import { sweepInboundPayments } from '../worker/inbound-payment-sweep';
import { issueStatements } from '../statements/issue';

/** The periodic jobs' activities (workflows/periodic.ts). Each is idempotent: a retry or a second run is harmless. */
export function createPeriodicActivities(deps: ActivityDeps) {
  return {
    async purgeExpiredEvents(): Promise<number> {
      return purgeExpiredEvents(deps.orm, deps.config.eventRetentionDays);
    },
    async sweepInboundPayments(): Promise<void> {
      await sweepInboundPayments(deps);
    },
    async issueStatementsOfPeriod(interval: string, at: string) {
      const config = { statementInterval: interval, webhookTaskQueue: deps.config.webhookTaskQueue };
      return issueStatements({ orm: deps.orm, config }, new Date(at), () => Context.current().heartbeat());
    },
  };
}
