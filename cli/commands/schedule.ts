import type { Command } from 'commander';
import { ScheduleNotFoundError } from '@temporalio/client';
import { loadConfig } from '../../config';
import { CambioError } from '../../domain/errors';
import { withTemporalServices, output } from '../context';
import { auditRequest } from '../audit';
import { dependencyFailure } from '../../services/errors';
import { periodicJobs, scheduleId } from '../../worker/schedules';
import type { ServiceContext } from '../../services/context';
import { SEND_DEADLINE_MS } from '../../services/decisions';

/** A Temporal call bounded as a decision's send is (decision 0215): Temporal cut under the command ends it. */
const withinDeadline = <T>(s: ServiceContext, call: () => Promise<T>): Promise<T> =>
  s.temporal.withDeadline(Date.now() + SEND_DEADLINE_MS, call);

/** A job of ours whose schedule no worker has created yet: nothing to act on (`schedule list` says the same). */
const notCreated = (id: string) =>
  new CambioError('NOT_FOUND', `schedule ${id} not created yet: a worker creates it when it starts`, {
    scheduleId: id,
  });

const DONE = { pause: 'paused', unpause: 'unpaused', trigger: 'triggered' } as const;

/**
 * Temporal failing the action after its request was audited (decision 0305): the request may have reached Temporal
 * and taken effect (a lost answer) or not. The CLI says that, not "nothing was done": `recorded` is true, the
 * schedule's state tells, and whether a rerun is harmless (a pause, an unpause) or runs the job again (a trigger).
 */
function afterRequest(id: string, name: keyof typeof DONE, err: unknown): unknown {
  if (err instanceof ScheduleNotFoundError) return notCreated(id); // deleted meanwhile: nothing was done
  const failure = dependencyFailure(err);
  if (!failure) return err;
  const e = err as { message?: string; cause?: { message?: string } };
  const cause = [e.message, e.cause?.message].filter(Boolean).join(': ');
  const rerun =
    name === 'trigger'
      ? 'its last run there says whether it ran; a second trigger runs it again'
      : 'running it again is harmless';
  const message =
    `${id} may have been ${DONE[name]}: the request is in the audit log, then Temporal did not answer (${cause}); ` +
    `\`cambio schedule list\` shows the schedule's state, and ${rerun}`;
  return new CambioError('SERVICE_UNAVAILABLE', message, { ...failure.details, recorded: true, scheduleId: id });
}

/**
 * `cambio schedule list|pause|unpause|trigger`: the periodic jobs' Temporal Schedules (worker/schedules.ts), by their
 * short name (event-purge, inbound-payment-sweep, statements, pix-reconciliation, rates-poll) or full id, as an
 * operator would on the Temporal UI.
 */
export function scheduleCommands(program: Command): void {
  const schedule = program.command('schedule').description("the periodic jobs' Temporal Schedules");
  // A job of this config, by its short name or full id; or a schedule of this deployment (its task queue's prefix)
  // that the config no longer has: a rail's provider or the polled rate sources removed leave theirs running, for the
  // operator to pause (decisions 0254, 0307). Which one it is, Temporal says (the action's describe): a name that is
  // neither is refused then, as a name, not as Temporal's bare "schedule not found".
  const targetOf = (name: string) => {
    const config = loadConfig();
    const ids = periodicJobs(config).map((j) => j.id);
    const prefix = scheduleId(config, '');
    const id = name.startsWith(prefix) ? name : scheduleId(config, name);
    const names = ids.map((known) => known.slice(prefix.length)).join(', ');
    const errors = [{ path: 'schedule', message: `must be one of ${names}` }];
    const unknown = () => new CambioError('VALIDATION_ERROR', `no schedule "${name}": one of ${names}`, { errors });
    return { id, configured: ids.includes(id), unknown };
  };

  schedule
    .command('list')
    .description('every periodic job: its schedule, whether it is paused, its last and next runs')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const rows = await withTemporalServices(async (s) =>
        Promise.all(
          periodicJobs(s.config).map(async (job) => {
            const d = await withinDeadline(s, () => s.temporal.schedule.getHandle(job.id).describe()).catch(
              (err: unknown) => {
                if (err instanceof ScheduleNotFoundError) return undefined;
                throw err;
              },
            );
            // The first worker that starts creates the schedules (worker/schedules.ts): none has yet.
            if (!d) return { id: job.id, workflowType: job.workflowType, created: false as const };
            const last = d.info.recentActions.at(-1);
            return {
              id: job.id,
              workflowType: job.workflowType,
              created: true as const,
              paused: d.state.paused,
              note: d.state.note ?? null,
              actionsTaken: d.info.numActionsTaken,
              lastRunAt: last ? last.takenAt.toISOString() : null,
              nextRunAt: d.info.nextActionTimes[0]?.toISOString() ?? null,
            };
          }),
        ),
      );
      const lines = rows.map((r) =>
        r.created
          ? `${r.id}  ${r.paused ? 'PAUSED' : 'active'}  runs ${r.actionsTaken}  next ${r.nextRunAt ?? '-'}`
          : `${r.id}  not created yet (a worker creates it when it starts)`,
      );
      output(Boolean(opts.json), rows, lines.join('\n'));
    });

  for (const [name, description] of [
    ['pause', 'pause a schedule: no run starts until it is unpaused'],
    ['unpause', 'resume a paused schedule'],
    ['trigger', 'run a schedule now, once'],
  ] as const) {
    schedule
      .command(`${name} <schedule>`)
      .description(description)
      .option('--reason <reason>', 'why (kept as the schedule note and in the audit log)')
      .option('--json', 'print JSON')
      .action(async (target: string, opts: { reason?: string; json?: boolean }) => {
        const { id, configured, unknown } = targetOf(target);
        // The schedule's state once the action is done: a trigger runs the job once and leaves a paused schedule
        // paused (Temporal's rule), which an operator who triggers a paused job to test it may not expect.
        let paused = false;
        await withTemporalServices(async (s) => {
          const handle = s.temporal.schedule.getHandle(id);
          const note = opts.reason ?? `${name} by cambio schedule`;
          // A job's schedule not created yet, or no schedule of ours, is refused before anything is audited as
          // requested.
          const described = await withinDeadline(s, () => handle.describe()).catch((err: unknown) => {
            if (!(err instanceof ScheduleNotFoundError)) throw err;
            throw configured ? notCreated(id) : unknown();
          });
          paused = name === 'pause' || (name === 'trigger' && described.state.paused);
          // Audited before Temporal is asked (decision 0305): the action is Temporal's alone, and a row written after
          // it was lost with Postgres, the schedule paused or triggered all the same.
          await auditRequest();
          try {
            if (name === 'pause') await withinDeadline(s, () => handle.pause(note));
            else if (name === 'unpause') await withinDeadline(s, () => handle.unpause(note));
            else await withinDeadline(s, () => handle.trigger());
          } catch (err) {
            throw afterRequest(id, name, err);
          }
        });
        const stays =
          name === 'trigger' && paused ? '; the schedule stays paused (`cambio schedule unpause` resumes it)' : '';
        output(Boolean(opts.json), { id, action: name, paused }, `${id}: ${name} done${stays}`);
      });
  }
}
