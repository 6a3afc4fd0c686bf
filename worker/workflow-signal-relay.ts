import type { Client } from '@temporalio/client';
import type { Orm } from '../db/orm';
import { claimSignals, deferSignals, finishSignals } from '../db/repositories/workflow-decisions';
import { sendSignal } from '../workflows/send-signal';
import { RELAY_BATCH, RELAY_LEASE_MS } from './workflow-start-relay';

// As for starts: each send well within the lease, so another relay never claims rows still being sent.
const SEND_DEADLINE_MS = 5_000;

/**
 * One pass over the signal outbox of `taskQueue`, run by the outbox relay after its starts: what a writer left
 * unsent (it died after its COMMIT, or Temporal was down) is sent now. Claims with a lease (SKIP LOCKED), sends with
 * no transaction open, then deletes the sent rows and defers the failed ones. Returns how many rows it claimed;
 * throws after the bookkeeping when some sends failed.
 */
export async function relayWorkflowSignals(orm: Orm, temporal: Client, taskQueue: string): Promise<number> {
  const em = orm.em.fork();
  const rows = await claimSignals(em, taskQueue, RELAY_BATCH, RELAY_LEASE_MS);
  if (!rows.length) return 0;
  const results = await Promise.allSettled(
    rows.map((row) => temporal.withDeadline(Date.now() + SEND_DEADLINE_MS, () => sendSignal(temporal, row))),
  );
  const ids = (status: PromiseSettledResult<void>['status']) =>
    rows.filter((_, i) => results[i].status === status).map((row) => row.decision_id);
  await Promise.all([finishSignals(em.fork(), ids('fulfilled')), deferSignals(em.fork(), ids('rejected'))]);
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
  if (failures.length) {
    throw new AggregateError(failures, `outbox relay: ${failures.length} of ${rows.length} signal(s) failed`);
  }
  return rows.length;
}
