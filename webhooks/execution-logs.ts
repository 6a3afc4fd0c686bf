import type { Em } from '../db/orm';
import type { ExecutionLog } from '../db/entities';
import { executionLogList, findVisibleLog, findVisibleLogOfAnyCustomer } from '../db/repositories/execution-logs';
import { findSubscription } from '../db/repositories/webhook-subscriptions';
import { attemptList } from '../db/repositories/webhook-attempts';
import { queueRedelivery } from '../db/repositories/webhook-recovery';
import { inTransaction } from '../db/transaction';
import { CambioError, notFound } from '../domain/errors';
import { ListQuery, runList } from '../lists/run-list';
import { presentAttempt, presentExecutionLog } from './presenters';
import type { WebhookContext } from './context';
import { releaseStrandedDelivery } from './stranded-deliveries';

/** The caller's subscription, deleted ones included: their logs stay readable. */
async function subscriptionOf(em: Em, subscriptionId: string) {
  const sub = await findSubscription(em, subscriptionId);
  if (!sub) throw notFound('subscription');
  return sub;
}

/** A log becomes visible once settled: its first attempt ended, or it was closed without one (decision 0071). */
async function findLog(em: Em, subscriptionId: string, executionLogId: string): Promise<ExecutionLog> {
  await subscriptionOf(em, subscriptionId);
  const log = await findVisibleLog(em, subscriptionId, executionLogId);
  if (!log) throw notFound('execution log');
  return log;
}

export async function listExecutionLogs(em: Em, subscriptionId: string, query: ListQuery, cursorSecret: string) {
  // The query's own errors (a bad cursor) come first, as on every list; then the subscription must exist.
  const page = await runList(em, executionLogList(subscriptionId), query, cursorSecret);
  await subscriptionOf(em, subscriptionId);
  return { data: page.data.map(presentExecutionLog), meta: page.meta };
}

export async function getExecutionLog(em: Em, subscriptionId: string, executionLogId: string) {
  return presentExecutionLog(await findLog(em, subscriptionId, executionLogId));
}

/**
 * Sends the same message (same id, same body) once more: one attempt, numbered after the last, whatever allowRetry
 * says and also after retries are exhausted. The attempt is queued as recover queues one (an outbox row of this
 * transaction, its workflow `webhook-delivery-<logId>-attempt-<n>-<queue>` started after COMMIT), behind the same
 * lock on the log's `next_attempt`: while an attempt is pending (retries scheduled, a recover or another redelivery
 * queued) the answer is 409 DELIVERY_IN_PROGRESS, so two attempts of one delivery never overlap, and a transaction
 * that rolls back has sent nothing. A marker left by workflows that have all ended (terminated by hand) is taken back
 * first (stranded-deliveries.ts), so such a delivery is redeliverable.
 */
export async function redeliver(s: WebhookContext, em: Em, subscriptionId: string, executionLogId: string) {
  return inTransaction(em, async (tx) => {
    const log = await findLog(tx, subscriptionId, executionLogId);
    const sub = await subscriptionOf(tx, subscriptionId);
    if (sub.deletedAt)
      throw new CambioError('INVALID_STATE', 'the subscription was deleted; its deliveries cannot be sent again', {
        subscriptionId,
      });
    if (sub.status === 'DISABLED') {
      const message = 'the subscription is DISABLED; PATCH its status to ACTIVE first';
      throw new CambioError('SUBSCRIPTION_DISABLED', message, { subscriptionId });
    }
    const queue = () => queueRedelivery(tx, s.config.webhookTaskQueue, subscriptionId, log.id);
    let queued = await queue();
    // Marked in progress by workflows that have all ended (terminated by hand): the marker is taken back.
    if (queued === null && (await releaseStrandedDelivery(s, tx, log.id))) queued = await queue();
    if (queued === null) {
      throw new CambioError(
        'DELIVERY_IN_PROGRESS',
        'this delivery is still being attempted; redeliver once it has finished',
        { executionLogId: log.id },
      );
    }
    return presentExecutionLog(log);
  });
}

/** GET .../executionLogs/{logId}/attempts: every finished attempt of a delivery, by the list conventions. */
export async function listAttempts(
  em: Em,
  subscriptionId: string,
  executionLogId: string,
  query: ListQuery,
  cursorSecret: string,
) {
  const page = await runList(em, attemptList(executionLogId), query, cursorSecret);
  await findLog(em, subscriptionId, executionLogId);
  return { data: page.data.map(presentAttempt), meta: page.meta };
}

/** Operators (CLI) name a log only: find its customer and subscription across customers. */
export async function findLogScope(
  systemScoped: Em,
  executionLogId: string,
): Promise<{ customerId: string; subscriptionId: string }> {
  const log = await findVisibleLogOfAnyCustomer(systemScoped, executionLogId);
  if (!log) throw notFound('execution log');
  return { customerId: log.customerId, subscriptionId: log.subscriptionId };
}
