// The periodic jobs, each a workflow a Temporal Schedule starts (worker/schedules.ts): one activity that does the
// job, so an operator sees every run, its result and its failures in the Temporal UI, and pauses or triggers it there.
import { patched, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { PeriodicActivities } from '../activities/periodic';
import type { RailActivities } from '../activities/rails';
import type { RateActivities } from '../activities/rates';

const { purgeExpiredEvents, purgeExpiredIdempotencyKeys, sweepInboundPayments } = proxyActivities<PeriodicActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumAttempts: 3 },
});

// Issuing goes through every account: long, so it heartbeats, and a retry skips what is already issued. It is retried
// until it succeeds, never given up: the next run issues the next period, not this one, so a run that gave up after a
// few attempts (a Postgres outage of a minute at the period's close) lost its period's statements for good (decision
// 0212). At most a minute apart, so the period is issued soon after the outage ends. A failing run shows its attempts
// and last failure on the Temporal UI.
const { issueStatementsOfPeriod } = proxyActivities<PeriodicActivities>({
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '10 seconds', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** One PIX reconciliation run, on the rails' task queue (the schedule passes its name: a workflow reads no config). */
export async function pixReconciliationWorkflow(railsTaskQueue: string) {
  const { reconcilePixReceived } = proxyActivities<RailActivities>({
    taskQueue: railsTaskQueue,
    startToCloseTimeout: '30 minutes',
    // Beats once per payment recorded; listing every page of a busy day stays well within this.
    heartbeatTimeout: '5 minutes',
    retry: { maximumAttempts: 3 },
  });
  return reconcilePixReceived();
}

/** One reconciliation run of `rail` (a rail of the registry whose connector lists), on the rails' task queue. */
export async function railReconciliationWorkflow(railsTaskQueue: string, rail: string) {
  const { railReconcile } = proxyActivities<RailActivities>({
    taskQueue: railsTaskQueue,
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '5 minutes',
    retry: { maximumAttempts: 3 },
  });
  return railReconcile({ rail });
}

const SCHEDULED_AT = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/** The instant the schedule meant this run for (a late or triggered run still issues the period it was meant for). */
function scheduledAt(): string {
  const at = workflowInfo().typedSearchAttributes.get(SCHEDULED_AT) ?? workflowInfo().startTime;
  return (at instanceof Date ? at : new Date(at)).toISOString();
}

// Runs started from here on purge idempotency keys too; one started before replays as it ran (events only).
const IDEMPOTENCY_KEY_PURGE = 'idempotency-key-purge';

/** Events past EVENT_RETENTION_DAYS, then idempotency keys past their 24 h (decision 0167). */
export async function eventPurgeWorkflow(): Promise<number | { events: number; idempotencyKeys: number }> {
  const events = await purgeExpiredEvents();
  if (!patched(IDEMPOTENCY_KEY_PURGE)) return events;
  return { events, idempotencyKeys: await purgeExpiredIdempotencyKeys() };
}

export async function inboundPaymentSweepWorkflow(): Promise<void> {
  await sweepInboundPayments();
}

/** `interval` is the schedule's STATEMENT_INTERVAL, passed by the schedule so that its periods and its runs agree. */
export async function issueStatementsWorkflow(interval: string) {
  return issueStatementsOfPeriod(interval, scheduledAt());
}

/**
 * One poll of the exchange-rate sources, on the rails' task queue (a source is a provider; the schedule passes the
 * queue's name). One attempt: the next scheduled run is the retry, with fresher rates than a retry would get.
 */
export async function ratesPollWorkflow(railsTaskQueue: string) {
  const { pollRateSources } = proxyActivities<RateActivities>({
    taskQueue: railsTaskQueue,
    // Each source is bounded by RATES_TIMEOUT_MS (5 s by default); this only bounds a worker that died mid-poll.
    startToCloseTimeout: '2 minutes',
    retry: { maximumAttempts: 1 },
  });
  return pollRateSources();
}
