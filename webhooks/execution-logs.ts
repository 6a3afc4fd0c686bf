import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { TypedSearchAttributes, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Em } from '../db/orm';
import type { ExecutionLog } from '../db/entities';
import { executionLogList, findVisibleLog, findVisibleLogOfAnyCustomer } from '../db/repositories/execution-logs';
import { findSubscription } from '../db/repositories/webhook-subscriptions';
import { webhookDeliveryWorkflowId } from '../workflows/ids';
import { customerIdKey } from '../workflows/search-attributes';
import { customerPriority } from '../workflows/fairness';
import type { WebhookDeliveryInput } from './delivery-workflow';
import { CambioError, notFound } from '../domain/errors';
import { ListQuery, runList } from '../lists/run-list';
import { presentExecutionLog } from './presenters';
import type { WebhookContext } from './context';

/** The caller's subscription, deleted ones included: their logs stay readable. */
async function subscriptionOf(em: Em, subscriptionId: string) {
  const sub = await findSubscription(em, subscriptionId);
  if (!sub) throw notFound('subscription');
  return sub;
}

/** A log becomes visible when its first attempt ends (docs/decisions.md). */
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
 * Sends the same message (same id, same body) once more, as a new run of the delivery's workflow id: one
 * attempt, numbered after the last, whatever allowRetry says and also after retries are exhausted. Starting
 * with conflict policy FAIL is the check: while a run is open (retries pending, or another redelivery) the
 * start fails and the answer is 409 DELIVERY_IN_PROGRESS, so two redeliveries can never overlap.
 */
export async function redeliver(s: WebhookContext, em: Em, subscriptionId: string, executionLogId: string) {
  const log = await findLog(em, subscriptionId, executionLogId);
  const sub = await subscriptionOf(em, subscriptionId);
  if (sub.deletedAt)
    throw new CambioError('INVALID_STATE', 'the subscription was deleted; its deliveries cannot be sent again', {
      subscriptionId,
    });
  if (sub.status === 'DISABLED') {
    throw new CambioError('SUBSCRIPTION_DISABLED', 'the subscription is DISABLED; PATCH its status to ACTIVE first', {
      subscriptionId,
    });
  }
  // A retry is scheduled or a recover queued this delivery (its own workflow id): the same attempt must not race.
  if (log.nextAttempt !== null) {
    throw new CambioError(
      'DELIVERY_IN_PROGRESS',
      'this delivery is still being attempted; redeliver once it has finished',
      { executionLogId: log.id },
    );
  }
  const input: WebhookDeliveryInput = { executionLogId: log.id, firstAttempt: log.attempts + 1, redelivery: true };
  try {
    await s.temporal.workflow.start('webhookDeliveryWorkflow', {
      taskQueue: s.config.webhookTaskQueue,
      workflowId: webhookDeliveryWorkflowId(log.id),
      args: [input],
      staticSummary: `WEBHOOK ${log.eventType} redelivery to ${log.url}`,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      typedSearchAttributes: new TypedSearchAttributes([{ key: customerIdKey, value: log.customerId }]),
      priority: customerPriority(log.customerId),
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new CambioError(
        'DELIVERY_IN_PROGRESS',
        'this delivery is still being attempted; redeliver once it has finished',
        { executionLogId: log.id },
      );
    }
    throw err;
  }
  return presentExecutionLog(log);
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
