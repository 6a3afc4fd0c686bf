import type { Client } from '@temporalio/client';
import type { Orm } from '../db/orm';
import { deferSignals, finishSignals, type PendingSignal } from '../db/repositories/workflow-decisions';
import { leaveUnmatchedByDecisions } from '../db/repositories/inbound-payments';
import { sendSignal, type SendOutcome } from '../workflows/send-signal';

// As for starts: each send well within the lease (RELAY_LEASE_MS), so another relay never claims rows still being
// sent.
const SEND_DEADLINE_MS = 5_000;

/**
 * The signal outbox's rows that a pass of the outbox relay of their task queue claimed after its starts
 * (`addClaimSignals`, in the starts' bookkeeping message): what a writer left unsent (it died after its COMMIT, or
 * Temporal was down) is sent now. Sends with no transaction open, then deletes the sent rows and defers the failed
 * ones (a payment whose deposit's workflow has closed is left UNMATCHED). Throws after the bookkeeping when some
 * sends failed.
 */
export async function sendClaimedSignals(orm: Orm, temporal: Client, rows: PendingSignal[]): Promise<void> {
  if (!rows.length) return;
  const em = orm.em.fork();
  const results = await Promise.allSettled(
    rows.map((row) => temporal.withDeadline(Date.now() + SEND_DEADLINE_MS, () => sendSignal(temporal, row))),
  );
  const ids = (status: PromiseSettledResult<SendOutcome>['status']) =>
    rows.filter((_, i) => results[i].status === status).map((row) => row.decision_id);
  // A payment whose deposit's workflow has closed: no deposit will take it, it is UNMATCHED.
  const closed = rows.filter((_, i) => {
    const r = results[i];
    return r.status === 'fulfilled' && r.value === 'closed';
  });
  await Promise.all([finishSignals(em.fork(), ids('fulfilled')), deferSignals(em.fork(), ids('rejected'))]);
  await leaveUnmatchedByDecisions(
    em.fork(),
    closed.map((row) => row.decision_id),
  );
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
  if (failures.length) {
    throw new AggregateError(failures, `outbox relay: ${failures.length} of ${rows.length} signal(s) failed`);
  }
}
