import type { Em } from '../db/orm';
import { inTransaction } from '../db/transaction';
import { queueRecovery, skippedDeliveries } from '../db/repositories/webhook-recovery';
import { findLiveSubscription } from '../db/repositories/webhook-subscriptions';
import { CambioError, notFound } from '../domain/errors';
import { parseInstant } from '../domain/report-period';
import type { WebhookContext } from './context';
import { releaseStrandedDelivery } from './stranded-deliveries';

/** How far back a recover may reach (Svix's limit): older deliveries are better caught up through GET /api/events. */
export const RECOVER_MAX_AGE_DAYS = 14;

// Deliveries marked in progress or pending that one recover asks Temporal about (two describes each, ~1-3 ms
// apiece): a customer whose endpoint is down with retries scheduled has every delivery marked, so each recover would
// ask about all of them. Temporal's CPU is every customer's: ten bound one request to about twenty describes, a few
// reads' worth, however often a customer calls it. The oldest are looked at; a narrower window reaches the others.
const STRANDED_CHECKS_PER_RECOVER = 10;

export interface RecoverInput {
  since: string;
  until?: string;
}

/**
 * POST /api/subscriptions/{id}/recover: one more attempt for every FAILED delivery of the subscription created in
 * [since, until), skipping those with an attempt pending; a marker whose workflows have all ended is taken back
 * (stranded-deliveries.ts). The starts are outbox rows of the request's transaction
 * (db/repositories/webhook-recovery.ts), so they commit with the idempotency key's answer: a client that retries with
 * the same key gets the stored count and nothing is sent twice; an API that dies before COMMIT queued nothing.
 */
export async function recoverDeliveries(s: WebhookContext, em: Em, subscriptionId: string, input: RecoverInput) {
  const now = new Date();
  const until = input.until ?? now.toISOString();
  // Read as a report's bounds are, to the microsecond; the date-time format admits a leap second (23:59:60), which
  // no Date holds: 400 here, not a 500 below.
  const since = parseInstant('since', input.since, '/since').micros;
  const end = parseInstant('until', until, '/until').micros;
  const oldest = BigInt(now.getTime() - RECOVER_MAX_AGE_DAYS * 86_400_000) * 1000n;
  if (since < oldest) {
    const message = `since must be at most ${RECOVER_MAX_AGE_DAYS} days back`;
    throw new CambioError('INVALID_PERIOD', message, { since: input.since });
  }
  if (end <= since) {
    throw new CambioError('INVALID_PERIOD', 'until must be after since', { since: input.since, until });
  }
  const count = await inTransaction(em, async (tx) => {
    // Not locked: an attempt's bookkeeping locks the log, then the subscription, and this statement the other way
    // round would deadlock with it. A PATCH that disables the subscription meanwhile is harmless: the queued
    // attempts find it DISABLED and send nothing.
    const sub = await findLiveSubscription(tx, subscriptionId);
    if (!sub) throw notFound('subscription');
    if (sub.status === 'DISABLED') {
      const message = 'the subscription is DISABLED; PATCH its status to ACTIVE first';
      throw new CambioError('SUBSCRIPTION_DISABLED', message, { subscriptionId });
    }
    const queued = await queueRecovery(tx, s.config.webhookTaskQueue, sub.id, input.since, until);
    // Those it skipped as in progress or pending whose workflows have all ended (terminated by hand) are taken back
    // and queued too; a bounded number per request, as each asks Temporal about its workflows.
    const skipped = await skippedDeliveries(tx, sub.id, input.since, until, STRANDED_CHECKS_PER_RECOVER);
    let released = 0;
    for (const id of skipped) if (await releaseStrandedDelivery(s, tx, id)) released += 1;
    if (released === 0) return queued;
    return queued + (await queueRecovery(tx, s.config.webhookTaskQueue, sub.id, input.since, until));
  });
  return { count };
}
