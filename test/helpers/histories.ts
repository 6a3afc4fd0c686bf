import fs from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';

/**
 * A workflow history recorded on older code, from test/fixtures/histories/ (the binary History a dev server's
 * `fetchHistory` gave), for `Worker.runReplayHistory` to replay on the current code.
 */
export const historyFixture = (name: string): proto.api.history.v1.History =>
  proto.api.history.v1.History.decode(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'histories', name)));

/** The activity types a history scheduled, in order. */
export const scheduledActivities = (history: proto.api.history.v1.IHistory): Array<string | null | undefined> =>
  (history.events ?? [])
    .filter((e) => e.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);

/** The local activity types a history recorded (the SDK's `core_local_activity` markers), in order. */
export const localActivities = (history: proto.api.history.v1.IHistory): string[] =>
  (history.events ?? [])
    .map((e) => e.markerRecordedEventAttributes)
    .filter((m) => m?.markerName === 'core_local_activity')
    .map((m) => JSON.parse(Buffer.from(m!.details!.data!.payloads![0].data!).toString()).activity_type as string);

type HistoryEvent = proto.api.history.v1.IHistoryEvent;

/**
 * How each activity of `activityTypes` a history scheduled ended, in the order the ends were recorded: the completed
 * event's attributes (its result) or the failed one's (a retried activity records only its last attempt).
 */
export function activityEnds(
  events: HistoryEvent[],
  activityTypes: readonly string[],
): Array<{ completed?: proto.api.history.v1.IActivityTaskCompletedEventAttributes; failed?: boolean }> {
  const scheduled = new Set(
    events
      .filter((e) => activityTypes.includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
      .map((e) => `${e.eventId}`),
  );
  return events.flatMap((e) => {
    const completed = e.activityTaskCompletedEventAttributes ?? undefined;
    const failed = e.activityTaskFailedEventAttributes ?? undefined;
    return scheduled.has(`${(completed ?? failed)?.scheduledEventId}`) ? [{ completed, failed: !!failed }] : [];
  });
}

/** A workflow's history events; none before the workflow exists. */
export const historyEvents = (handle: WorkflowHandle): Promise<HistoryEvent[]> =>
  handle
    .fetchHistory()
    .then((h) => h.events ?? [])
    .catch(() => []);

/**
 * How the `activityType` a workflow scheduled ended, once it has: COMPLETED or FAILED (a retried activity records only
 * its last attempt); undefined while it has not, or before the workflow exists.
 */
export async function activityEnded(
  handle: WorkflowHandle,
  activityType: string,
): Promise<'COMPLETED' | 'FAILED' | undefined> {
  const [end] = activityEnds(await historyEvents(handle), [activityType]);
  if (!end) return undefined;
  return end.completed ? 'COMPLETED' : 'FAILED';
}
