// Every periodic job is a Temporal Schedule (decision 0073): visible on the Temporal UI's Schedules page, run once per
// deployment whatever the number of workers, paused and triggered by an operator there or with
// `cambio schedule list|pause|trigger`. Each worker that serves the main queue creates them at start; a schedule that
// exists already (another worker, an earlier start) gets this worker's spec and action, its paused state kept.
import { randomUUID } from 'node:crypto';
import {
  Client,
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  type ScheduleDescription,
  type ScheduleSpec,
  type ScheduleUpdateOptions,
} from '@temporalio/client';
// The SDK's own encoding of a schedule, for the update it makes without a conflict token (applyConfig).
import {
  compileUpdatedScheduleOptions,
  encodeScheduleAction,
  encodeSchedulePolicies,
  encodeScheduleSpec,
  encodeScheduleState,
} from '@temporalio/client/lib/schedule-helpers';
import type { Config } from '../config';
import { parseStatementInterval } from '../domain/statement-interval';
import { RAIL_ENTRIES } from '../rails/registry';

export interface PeriodicJob {
  /** The schedule id, prefixed with the task queue: one set of schedules per deployment. */
  id: string;
  workflowType: string;
  args: unknown[];
  spec: ScheduleSpec;
  note: string;
  /**
   * Run once as the worker starts (unless paused): the job's result is needed now, not at the next interval (the
   * rates' poll: a deployment or a restart has fresh rates before its first quotes, not up to an interval later).
   */
  runAtStart?: boolean;
  /**
   * A run due while one is still going: SKIP unless set. The statements' is BUFFER_ALL: each run issues its own
   * period, so one skipped was a period never issued (decision 0255).
   */
  overlap?: ScheduleOverlapPolicy;
}

export const scheduleId = (config: Pick<Config, 'taskQueue'>, job: string) => `${config.taskQueue}-${job}`;

/** The spec of STATEMENT_INTERVAL: each period closes at 00:00 UTC (month, day) or every duration from the epoch. */
export function statementSpec(text: string): ScheduleSpec {
  const interval = parseStatementInterval(text);
  switch (interval.kind) {
    case 'month':
      return { calendars: [{ dayOfMonth: 1, hour: 0, minute: 0, second: 0 }], timezone: 'UTC' };
    case 'day':
      return { calendars: [{ hour: 0, minute: 0, second: 0 }], timezone: 'UTC' };
    case 'every':
      return { intervals: [{ every: interval.ms }] };
  }
}

/**
 * What the jobs read of the config. The rest is optional: a config without the rails' task queue (a test's) runs no
 * provider's job; one with it is the whole config, which the registry's rails read.
 */
export type SchedulesConfig = Pick<Config, 'taskQueue' | 'statementInterval'> & Partial<Config>;

/**
 * A reconciliation per rail of the registry that lists what it received and has a provider here: its activity runs
 * on the rails' task queue. PIX's keeps its schedule id and workflow (`pix-reconciliation`, pixReconciliationWorkflow).
 */
function railJobs(config: SchedulesConfig): PeriodicJob[] {
  const railsTaskQueue = config.railsTaskQueue;
  // Without the rails' part (a test's config) nothing is reconciled.
  if (!railsTaskQueue) return [];
  const full = config as Config;
  return RAIL_ENTRIES.flatMap((e) => {
    if (!e.reconciliation || !e.hasProvider(full)) return [];
    const r = e.reconciliation;
    return [
      {
        id: scheduleId(config, `${e.slug}-reconciliation`),
        workflowType: r.workflowType ?? 'railReconciliationWorkflow',
        args: r.workflowType ? [railsTaskQueue] : [railsTaskQueue, e.rail],
        spec: { intervals: [{ every: `${r.everySeconds(full)} seconds` }] },
        note: r.note(full),
      },
    ];
  });
}

/** The exchange-rate poll, when a polled source is configured (not the sandbox's table): on the rails' queue. */
function rateJobs(config: SchedulesConfig): PeriodicJob[] {
  const polled = (config.rates?.sources ?? []).filter((s) => s !== 'table');
  if (polled.length === 0 || !config.railsTaskQueue) return [];
  const every = config.rates!.pollSeconds;
  return [
    {
      id: scheduleId(config, 'rates-poll'),
      workflowType: 'ratesPollWorkflow',
      args: [config.railsTaskQueue],
      spec: { intervals: [{ every: `${every} seconds` }] },
      note: `Polls the exchange-rate sources ${polled.join(', ')} into Postgres (RATES_POLL_SECONDS=${every})`,
      runAtStart: true,
    },
  ];
}

export function periodicJobs(config: SchedulesConfig): PeriodicJob[] {
  return [
    {
      id: scheduleId(config, 'event-purge'),
      workflowType: 'eventPurgeWorkflow',
      args: [],
      spec: { intervals: [{ every: '1 hour' }] },
      note: 'Purges events past EVENT_RETENTION_DAYS and idempotency keys past their 24 h',
    },
    {
      id: scheduleId(config, 'inbound-payment-sweep'),
      workflowType: 'inboundPaymentSweepWorkflow',
      args: [],
      spec: { intervals: [{ every: '30 seconds' }] },
      note: 'Has deposits decide inbound payments whose reporter died before asking',
    },
    {
      id: scheduleId(config, 'statements'),
      workflowType: 'issueStatementsWorkflow',
      args: [config.statementInterval],
      spec: statementSpec(config.statementInterval),
      note: `Issues the statements of each closed period (STATEMENT_INTERVAL=${config.statementInterval})`,
      overlap: ScheduleOverlapPolicy.BUFFER_ALL,
    },
    ...railJobs(config),
    ...rateJobs(config),
  ];
}

const policies = (job: PeriodicJob) => ({
  overlap: job.overlap ?? ScheduleOverlapPolicy.SKIP,
  catchupWindow: '1 day' as const,
});

const action = (config: SchedulesConfig, job: PeriodicJob) => ({
  type: 'startWorkflow' as const,
  workflowType: job.workflowType,
  args: job.args,
  taskQueue: config.taskQueue,
  workflowId: job.id,
});

/**
 * Creates each schedule unless it exists; one that exists gets this config's spec and action. Runs never overlap: a
 * run due while one is still going is skipped (the statements': waits its turn), and a run missed while the cluster
 * was down is caught up within a day.
 */
export async function ensureSchedules(
  client: Client,
  config: SchedulesConfig,
  jobs: PeriodicJob[] = periodicJobs(config),
  onRunAtStartError: (job: PeriodicJob, err: unknown) => void = () => undefined,
): Promise<void> {
  for (const job of jobs) {
    try {
      await client.schedule.create({
        scheduleId: job.id,
        spec: job.spec,
        action: action(config, job),
        policies: policies(job),
        state: { note: job.note },
      });
    } catch (err) {
      if (!(err instanceof ScheduleAlreadyRunning)) throw err;
      await applyConfig(client, config, job);
    }
    if (job.runAtStart) await runNow(client, job).catch((err: unknown) => onRunAtStartError(job, err));
  }
}

/**
 * Gives an existing schedule this config's spec and action (decision 0254): a changed STATEMENT_INTERVAL,
 * RATES_POLL_SECONDS, reconciliation interval or rails' queue takes effect at the next worker start, not never. The
 * state is the operator's: paused stays paused with its reason; a running one shows this config's note.
 *
 * An update replaces the whole schedule, its paused state included, so it carries the conflict token of the describe
 * it was computed from (decision 0306): a pause, an unpause or another worker's update that reached Temporal between
 * the two makes Temporal drop this update (silently: it answers OK), and it is computed again from what is there now.
 * Without the token an operator's pause made in that gap was undone, and the job ran on. The SDK's handle.update()
 * sends no token, hence the request made here as the SDK makes it.
 */
async function applyConfig(client: Client, config: SchedulesConfig, job: PeriodicJob): Promise<void> {
  const handle = client.schedule.getHandle(job.id);
  for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
    const previous = await handle.describe();
    const state = { paused: previous.state.paused, note: previous.state.paused ? previous.state.note : job.note };
    await updateUnlessChanged(client, job.id, previous, {
      spec: job.spec,
      action: action(config, job),
      policies: policies(job),
      state,
    });
    // Applied: the token moved by one (this update) and the state is the one written. Anything else reached it
    // first, or right after; a second pass reads it and writes this config over it, keeping its state.
    const after = await handle.describe();
    const applied = token(after) === token(previous) + 1n;
    if (applied && after.state.paused === state.paused && (after.state.note ?? '') === (state.note ?? '')) return;
  }
  // Changed under each of the attempts (workers starting together, each writing its config): the last writer's
  // stands, as in a rolling change of the config (decision 0254); the next start applies this one again.
}

/** Describes, then updates in a tight loop only when many workers start together: a bound, not a wait. */
const UPDATE_ATTEMPTS = 5;

const token = (d: ScheduleDescription): bigint => {
  const raw = d.raw.conflictToken;
  return raw && raw.length === 8 ? Buffer.from(raw).readBigInt64BE() : -1n;
};

/** handle.update()'s request (the SDK's own encoding, the action's headers kept), with `previous`'s conflict token. */
async function updateUnlessChanged(
  client: Client,
  scheduleId: string,
  previous: ScheduleDescription,
  updated: ScheduleUpdateOptions,
): Promise<void> {
  const compiled = compileUpdatedScheduleOptions(scheduleId, updated);
  const { namespace, loadedDataConverter, identity } = client.options;
  const headers = previous.raw.schedule?.action?.startWorkflow?.header?.fields ?? {};
  await client.workflowService.updateSchedule({
    namespace,
    scheduleId,
    schedule: {
      spec: encodeScheduleSpec(compiled.spec),
      action: await encodeScheduleAction(loadedDataConverter, namespace, compiled.action, headers),
      policies: encodeSchedulePolicies(compiled.policies),
      state: encodeScheduleState(compiled.state),
    },
    conflictToken: previous.raw.conflictToken,
    identity,
    requestId: randomUUID(),
  });
}

/** One run of `job` now, unless an operator paused it; skipped if a run is still going. */
async function runNow(client: Client, job: PeriodicJob): Promise<void> {
  const handle = client.schedule.getHandle(job.id);
  if ((await handle.describe()).state.paused) return;
  await handle.trigger(ScheduleOverlapPolicy.SKIP);
}
