import fs from 'node:fs';
import path from 'node:path';
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
