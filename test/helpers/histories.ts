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

/**
 * How the first `activityType` a workflow scheduled ended, once it has: COMPLETED or FAILED (a retried activity
 * records only its last attempt); undefined while it has not, or before the workflow exists.
 */
export async function activityEnded(
  handle: WorkflowHandle,
  activityType: string,
): Promise<'COMPLETED' | 'FAILED' | undefined> {
  const events = await handle
    .fetchHistory()
    .then((h) => h.events ?? [])
    .catch(() => []);
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activityType);
  if (!scheduled) return undefined;
  const of = (id: unknown) => `${id}` === `${scheduled.eventId}`;
  if (events.some((e) => of(e.activityTaskCompletedEventAttributes?.scheduledEventId))) return 'COMPLETED';
  if (events.some((e) => of(e.activityTaskFailedEventAttributes?.scheduledEventId))) return 'FAILED';
  return undefined;
}
