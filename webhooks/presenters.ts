import type { ExecutionLog, WebhookAttempt, WebhookSubscription } from '../db/entities';
import { allResources } from './event-types';

/**
 * Spec: Webhook subscription. Never the secret: only the create response carries it. `includeAll` lists the
 * catalogue as it is now (what the fan-out sends it), not the list stored when it was created.
 */
export const presentSubscription = (sub: WebhookSubscription) => ({
  id: sub.id,
  companyId: sub.customerId,
  url: sub.url,
  includeAll: sub.includeAll,
  resources: sub.includeAll ? allResources() : sub.resources,
  allowRetry: sub.allowRetry,
  status: sub.status,
  disabledAt: sub.disabledAt ? sub.disabledAt.toISOString() : null,
  disabledReason: sub.disabledReason,
  createdAt: sub.createdAt.toISOString(),
  updatedAt: sub.updatedAt.toISOString(),
});

/** Spec: Execution log. `retryAttempts` counts the attempts after the first. */
export const presentExecutionLog = (log: ExecutionLog) => ({
  id: log.id,
  companyId: log.customerId,
  subscriptionId: log.subscriptionId,
  messageId: log.messageId,
  eventType: log.eventType,
  url: log.url,
  payload: log.payload,
  httpStatus: log.httpStatus,
  status: log.status,
  retryAttempts: Math.max(0, log.attempts - 1),
  createdAt: log.createdAt.toISOString(),
  updatedAt: log.updatedAt.toISOString(),
  error: log.error,
});

/** Spec: one attempt of a delivery (Svix's message attempt); `responseBody` is the first 1 KiB of the answer. */
export const presentAttempt = (a: WebhookAttempt) => ({
  attempt: a.attempt,
  attemptedAt: a.createdAt.toISOString(),
  trigger: a.trigger,
  httpStatus: a.httpStatus ?? 0,
  durationMs: a.durationMs ?? 0,
  waitedMs: a.waitedMs,
  error: a.error,
  responseBody: a.responseBody,
});
