/**
 * Execution logs (table `execution_logs`): one delivery of one event to one subscription. Two ways in:
 * - the customer's and the operator's reads go through the ORM; tenant: the ORM's tenant filter (an operator's
 *   system-scoped EntityManager sees every customer, and the function says so); the list page is run by the list
 *   machinery, which adds the customer from the EntityManager's scope;
 * - the delivery attempt (webhooks/delivery-activities.ts) reads and writes straight through the driver (`rawQuery`,
 *   prepared), outside any transaction, so no connection is held during the POST. Tenant: none applied; it runs in
 *   a worker's system scope and the log id (from the workflow) names the row.
 * Rows are created by the event fan-out (events.ts); recovery and subscription health are in webhook-recovery.ts.
 */
import { CambioError } from '../../domain/errors';
import { ExecutionLog, ExecutionLogSchema, WebhookSubscription, WebhookSubscriptionSchema } from '../entities';
import type { Em } from '../orm';
import { numbered, rawQuery } from '../raw';
import { entityFromRow } from '../rows';
import type { ListResource } from './lists';

// A log becomes visible once it is settled: its first attempt ended, or it was closed without one (FAILED
// SUBSCRIPTION_DISABLED, ENDPOINT_BUSY or SUBSCRIPTION_DELETED, or DELIVERY_STOPPED by recover when its workflow
// ended before that: webhook-recovery.ts), so a delivery that was due is never hidden. A trigger stamps its
// created_at then, at COMMIT, after every log of its subscription listed before it (decision 0347): the list's order
// is the order logs appeared.
const SETTLED = { status: { $ne: 'PENDING' } } as const;

/** A log of the subscription visible to its customer. */
export function findVisibleLog(em: Em, subscriptionId: string, executionLogId: string): Promise<ExecutionLog | null> {
  const visible = { id: executionLogId, subscriptionId, ...SETTLED };
  return em.findOne(ExecutionLogSchema, visible, { refresh: true });
}

/** For operators (a system-scoped EntityManager): a visible log by its id alone, whichever its customer. */
export function findVisibleLogOfAnyCustomer(systemScoped: Em, executionLogId: string): Promise<ExecutionLog | null> {
  return systemScoped.findOne(ExecutionLogSchema, { id: executionLogId, ...SETTLED });
}

/**
 * A subscription's visible logs, for its list page (no filters: ../shared/spec/decisions.md, "Webhooks").
 */
export function executionLogList(subscriptionId: string): ListResource<ExecutionLog> {
  return {
    entity: ExecutionLogSchema,
    from: 'execution_logs l',
    alias: 'l',
    catalogue: {},
    where: { sql: "l.subscription_id = ? and l.status <> 'PENDING'", params: [subscriptionId] },
  };
}

// The log and its subscription in one round trip, each row as JSON (a fixed result type, so the prepared statement
// survives a migration that adds a column), read-only: the attempt is written by `finishAttempt`
// (webhook-attempts.ts).
const LOG_AND_SUBSCRIPTION = numbered(
  'select row_to_json(l) as log, ' +
    '(select row_to_json(s) from webhook_subscriptions s where s.id = l.subscription_id) as sub ' +
    'from execution_logs l where l.id = ?',
);

/** A delivery's log and its subscription (deleted ones too); NOT_FOUND when the log does not exist. */
export async function readLogAndSubscription(
  em: Em,
  executionLogId: string,
): Promise<{ log: ExecutionLog; sub: WebhookSubscription }> {
  const [row] = await rawQuery<{ log: Record<string, unknown>; sub: Record<string, unknown> }>(
    em,
    LOG_AND_SUBSCRIPTION,
    [executionLogId],
    { prepared: 'cambio-delivery-attempt' },
  );
  if (!row) throw new CambioError('NOT_FOUND', `execution log ${executionLogId} not found`);
  return {
    log: entityFromRow(em, ExecutionLogSchema, row.log),
    sub: entityFromRow(em, WebhookSubscriptionSchema, row.sub),
  };
}

// No attempt is made, but the delivery was due: it ends FAILED with the reason, so it is listed and recover finds
// it. A delivery already delivered keeps its SUCCESS (a redelivery stopped this way changes nothing).
// No response came this time: httpStatus 0 ("0 when no response was received"), not the last attempt's status.
const FAIL_WITHOUT_ATTEMPT = numbered(
  `update execution_logs set status = 'FAILED', error = ?, http_status = 0, updated_at = now()
   where id = ? and status <> 'SUCCESS'`,
);

/** Why a due delivery was closed without an attempt. */
export type UnattemptedReason = 'SUBSCRIPTION_DISABLED' | 'ENDPOINT_BUSY';

/** Closes a due delivery FAILED without an attempt (decision 0071). */
export async function failWithoutAttempt(em: Em, executionLogId: string, reason: UnattemptedReason): Promise<void> {
  await rawQuery(em, FAIL_WITHOUT_ATTEMPT, [reason, executionLogId], { prepared: 'cambio-delivery-unattempted' });
}

// A deleted subscription is sent nothing more, and recover refuses it: a delivery it never attempted ends FAILED
// SUBSCRIPTION_DELETED, so that its log is readable as the subscription's others are and nothing waits on it. One it
// attempted keeps its last attempt's outcome.
const CLOSE_FOR_DELETED_SUBSCRIPTION = numbered(
  `update execution_logs set status = 'FAILED', error = 'SUBSCRIPTION_DELETED', http_status = 0, updated_at = now()
   where id = ? and status = 'PENDING'`,
);

/** Closes a delivery of a deleted subscription that was never attempted (decision 0365). */
export async function closeForDeletedSubscription(em: Em, executionLogId: string): Promise<void> {
  await rawQuery(em, CLOSE_FOR_DELETED_SUBSCRIPTION, [executionLogId], { prepared: 'cambio-delivery-deleted' });
}
