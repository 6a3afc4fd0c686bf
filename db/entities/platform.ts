import { EntitySchema } from '@mikro-orm/core';
import { tenantFilter, timestamp } from './common';

/**
 * A state change worth telling the customer about, with its final payload, written in the same
 * transaction as the change itself. Webhook delivery reads from here.
 */
export interface DomainEvent {
  id: string;
  customerId: string;
  type: string;
  resourceType: 'OPERATION' | 'BENEFICIARY' | 'ASSET' | 'STATEMENT';
  resourceId: string;
  payload: Record<string, unknown>;
  // Dedupes a retried activity: one event per resource transition.
  dedupeKey: string;
  atTime: Date;
  createdAt: Date;
}

export const DomainEventSchema = new EntitySchema<DomainEvent>({
  name: 'DomainEvent',
  tableName: 'events',
  filters: tenantFilter,
  properties: {
    id: { type: 'uuid', primary: true },
    customerId: { type: 'uuid' },
    type: { type: 'string' },
    resourceType: { type: 'string' },
    resourceId: { type: 'uuid', index: true },
    payload: { type: 'json' },
    dedupeKey: { type: 'string', unique: true },
    atTime: { ...timestamp },
    createdAt: { ...timestamp },
  },
});

/**
 * Transactional outbox for workflow starts: the row commits with the business change, and its COMMIT wakes the
 * relay of the workers of `taskQueue`, which starts the workflow and deletes the row (worker/workflow-start-relay.ts).
 */
export interface WorkflowStart {
  workflowId: string;
  workflowType: string;
  /** The task queue whose workers start and run it; null for rows from before the column (any relay's). */
  taskQueue: string | null;
  args: unknown[];
  searchAttributes: Record<string, string>;
  /** One line for the Temporal UI's workflow list (the start's static summary). */
  summary?: string | null;
  createdAt: Date;
}

export const WorkflowStartSchema = new EntitySchema<WorkflowStart>({
  name: 'WorkflowStart',
  tableName: 'workflow_starts',
  properties: {
    workflowId: { type: 'string', primary: true },
    workflowType: { type: 'string' },
    taskQueue: { type: 'string', nullable: true },
    args: { type: 'json' },
    searchAttributes: { type: 'json' },
    summary: { type: 'text', nullable: true },
    createdAt: { ...timestamp },
  },
});

export interface IdempotencyRecord {
  customerId: string;
  key: string;
  requestHash: string;
  /** DONE: the answer is stored; STARTED: the key's instant, written before a request names rows by it (0168). */
  state: 'IN_PROGRESS' | 'STARTED' | 'DONE';
  responseStatus: number | null;
  responseBody: unknown;
  createdAt: Date;
  expiresAt: Date;
}

export const IdempotencyRecordSchema = new EntitySchema<IdempotencyRecord>({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_keys',
  properties: {
    customerId: { type: 'uuid', primary: true },
    key: { type: 'uuid', primary: true },
    requestHash: { type: 'string' },
    state: { type: 'string' },
    responseStatus: { type: 'integer', nullable: true },
    responseBody: { type: 'json', nullable: true },
    createdAt: { ...timestamp },
    expiresAt: { ...timestamp, index: true },
  },
});

export { tenantFilter };
