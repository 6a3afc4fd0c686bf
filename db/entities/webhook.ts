import { EntitySchema } from '@mikro-orm/core';
import { tenantFilter, timestamp } from './common';

export interface SubscriptionResource {
  name: string;
  events: string[];
}

/**
 * A customer's webhook endpoint. Secrets are stored encrypted (webhooks/secrets.ts) because they must sign;
 * during a rotation's overlap the previous one signs too. A deleted subscription keeps its row (its execution
 * logs stay readable) with `deletedAt` set, which stops every future attempt.
 */
export interface WebhookSubscription {
  id: string;
  customerId: string;
  url: string;
  includeAll: boolean;
  resources: SubscriptionResource[];
  allowRetry: boolean;
  secretEncrypted: string;
  previousSecretEncrypted: string | null;
  previousSecretExpiresAt: Date | null;
  deletedAt: Date | null;
  /** DISABLED: nothing is delivered (auto-disabled after failing WEBHOOK_DISABLE_AFTER_SECONDS, or paused). */
  status: SubscriptionStatus;
  disabledAt: Date | null;
  disabledReason: string | null;
  /** First failed attempt since the last success (null after a success); with `failedAttempts`, the disable rule. */
  failingSince: Date | null;
  failedAttempts: number;
  createdAt: Date;
  updatedAt: Date;
}

export type SubscriptionStatus = 'ACTIVE' | 'DISABLED';

export const WebhookSubscriptionSchema = new EntitySchema<WebhookSubscription>({
  name: 'WebhookSubscription',
  tableName: 'webhook_subscriptions',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    customerId: { type: 'uuid' },
    url: { type: 'text' },
    includeAll: { type: 'boolean' },
    resources: { type: 'json' },
    allowRetry: { type: 'boolean' },
    secretEncrypted: { type: 'text' },
    previousSecretEncrypted: { type: 'text', nullable: true },
    previousSecretExpiresAt: { ...timestamp, nullable: true },
    deletedAt: { ...timestamp, nullable: true },
    status: { type: 'string', default: 'ACTIVE' },
    disabledAt: { ...timestamp, nullable: true },
    disabledReason: { type: 'text', nullable: true },
    failingSince: { ...timestamp, nullable: true },
    failedAttempts: { type: 'integer', default: 0 },
    createdAt: { ...timestamp },
    updatedAt: { ...timestamp },
  },
});

export type DeliveryStatus = 'PENDING' | 'SUCCESS' | 'FAILED';

/**
 * One delivery: one event to one subscription. Written with the event (status PENDING, `attempts` 0, not yet
 * visible to reads) and updated by each attempt; `attempts` is the number of the last attempt recorded, so a
 * retried attempt activity never counts twice.
 */
export interface ExecutionLog {
  id: string;
  customerId: string;
  subscriptionId: string;
  eventId: string;
  messageId: string;
  eventType: string;
  url: string;
  payload: string;
  httpStatus: number;
  status: DeliveryStatus;
  error: string | null;
  attempts: number;
  /** The attempt a workflow will make next (scheduled retry, redelivery by recover); null when none is pending. */
  nextAttempt: number | null;
  /** The last attempt counted toward the subscription's failure tracking (a retried activity counts once). */
  healthAttempt: number;
  createdAt: Date;
  updatedAt: Date;
}

export const ExecutionLogSchema = new EntitySchema<ExecutionLog>({
  name: 'ExecutionLog',
  tableName: 'execution_logs',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    customerId: { type: 'uuid' },
    subscriptionId: { type: 'uuid' },
    eventId: { type: 'uuid' },
    messageId: { type: 'string', unique: true },
    eventType: { type: 'string' },
    url: { type: 'text' },
    payload: { type: 'text' },
    httpStatus: { type: 'integer' },
    status: { type: 'string' },
    error: { type: 'text', nullable: true },
    attempts: { type: 'integer' },
    nextAttempt: { type: 'integer', nullable: true },
    healthAttempt: { type: 'integer', default: 0 },
    createdAt: { ...timestamp },
    updatedAt: { ...timestamp },
  },
});

/** Why an attempt was made: the delivery's own schedule, a manual redelivery, or a recover. */
export type AttemptTrigger = 'SCHEDULED' | 'REDELIVERY' | 'RECOVERY';

/**
 * One attempt of a delivery (Svix's message attempt). Written before the POST, without an outcome, and finished
 * with it: an attempt with `finishedAt` null is in flight, or was cut short by a worker that died.
 */
export interface WebhookAttempt {
  id: string;
  customerId: string;
  executionLogId: string;
  attempt: number;
  trigger: AttemptTrigger;
  /** How long the delivery waited for a free slot of its endpoint (WEBHOOK_ENDPOINT_CONCURRENCY) before it. */
  waitedMs: number;
  /** When the attempt began (the list's order). */
  createdAt: Date;
  finishedAt: Date | null;
  httpStatus: number | null;
  durationMs: number | null;
  error: string | null;
  /** The first WEBHOOK_RESPONSE_BODY_BYTES of the receiver's answer. */
  responseBody: string | null;
}

export const WebhookAttemptSchema = new EntitySchema<WebhookAttempt>({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    customerId: { type: 'uuid' },
    executionLogId: { type: 'uuid' },
    attempt: { type: 'integer' },
    trigger: { type: 'string' },
    waitedMs: { type: 'integer', default: 0 },
    createdAt: { ...timestamp },
    finishedAt: { ...timestamp, nullable: true },
    httpStatus: { type: 'integer', nullable: true },
    durationMs: { type: 'integer', nullable: true },
    error: { type: 'text', nullable: true },
    responseBody: { type: 'text', nullable: true },
  },
});
