import { EVENT_RESOURCES, EVENT_TYPES } from '../../webhooks/event-types';
import { pageQuerySchema } from '../../lists/run-list';
import { idParams } from './common';

// Which events belong to which resource is checked by the service (VALIDATION_ERROR naming the entry).
const resourceEntry = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'events'],
  properties: {
    name: { type: 'string', enum: [...EVENT_RESOURCES] },
    events: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      maxItems: EVENT_TYPES.length,
      items: { type: 'string', enum: [...EVENT_TYPES] },
    },
  },
} as const;

const resources = { type: 'array', minItems: 1, maxItems: EVENT_RESOURCES.length, items: resourceEntry } as const;
// The URL rules themselves (https, public addresses) are checked by the service: INVALID_WEBHOOK_URL.
const url = { type: 'string', minLength: 1, maxLength: 2048 } as const;

export const createSubscriptionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url,
    includeAll: { type: 'boolean', default: false },
    resources,
    allowRetry: { type: 'boolean', default: false },
  },
} as const;

export const updateSubscriptionBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url,
    includeAll: { type: 'boolean' },
    resources,
    allowRetry: { type: 'boolean' },
    status: {
      type: 'string',
      enum: ['ACTIVE', 'DISABLED'],
      description: 'ACTIVE re-enables a DISABLED subscription; DISABLED pauses it',
    },
  },
} as const;

export const subscriptionParams = idParams('subscriptionId');
export const executionLogParams = idParams('subscriptionId', 'executionLogId');

// The delivery-log list follows the list conventions without filters (spec).
export const executionLogListQuery = pageQuerySchema;

// Response shapes (built by webhooks/presenters.ts).
const timestamp = { type: 'string', format: 'date-time' } as const;
const subscriptionProperties = {
  id: { type: 'string', format: 'uuid' },
  companyId: { type: 'string' },
  url: { type: 'string' },
  includeAll: { type: 'boolean' },
  resources: {
    type: 'array',
    items: {
      type: 'object',
      required: ['name', 'events'],
      properties: {
        name: { type: 'string', enum: [...EVENT_RESOURCES] },
        events: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } },
      },
    },
  },
  allowRetry: { type: 'boolean' },
  status: {
    type: 'string',
    enum: ['ACTIVE', 'DISABLED'],
    description:
      'DISABLED: nothing is delivered (every attempt failed for WEBHOOK_DISABLE_AFTER_SECONDS with at least 3 ' +
      'failures, or paused by PATCH); PATCH status ACTIVE re-enables it',
  },
  disabledAt: { type: ['string', 'null'], format: 'date-time' },
  disabledReason: { type: ['string', 'null'] },
  createdAt: timestamp,
  updatedAt: timestamp,
} as const;
const required = [
  ...['id', 'companyId', 'url', 'includeAll', 'resources', 'allowRetry'],
  ...['status', 'disabledAt', 'disabledReason', 'createdAt', 'updatedAt'],
];

export const subscriptionResponse = { type: 'object', required, properties: subscriptionProperties };
export const createdSubscriptionResponse = {
  type: 'object',
  required: [...required, 'secret'],
  properties: {
    ...subscriptionProperties,
    secret: { type: 'string', description: 'Signing secret (whsec_...), shown once' },
  },
};
export const secretResponse = { type: 'object', required: ['secret'], properties: { secret: { type: 'string' } } };

const meta = {
  type: 'object',
  properties: {
    previousCursor: { type: ['string', 'null'] },
    nextCursor: { type: ['string', 'null'] },
    total: { type: 'integer' },
  },
};
export const subscriptionListResponse = {
  type: 'object',
  properties: { data: { type: 'array', items: subscriptionResponse }, meta },
};

export const executionLogResponse = {
  type: 'object',
  required: [
    'id',
    'companyId',
    'subscriptionId',
    'messageId',
    'eventType',
    'url',
    'payload',
    'httpStatus',
    'status',
    'retryAttempts',
    'createdAt',
    'updatedAt',
    'error',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    companyId: { type: 'string' },
    subscriptionId: { type: 'string', format: 'uuid' },
    messageId: { type: 'string', description: 'Same as the X-Message-Id and webhook-id headers' },
    eventType: { type: 'string', enum: [...EVENT_TYPES] },
    url: { type: 'string' },
    payload: { type: 'string', description: 'The body exactly as sent' },
    httpStatus: { type: 'integer', description: '0 when no response came back' },
    status: { type: 'string', enum: ['SUCCESS', 'FAILED'] },
    retryAttempts: { type: 'integer', description: 'Attempts so far minus one' },
    createdAt: timestamp,
    updatedAt: timestamp,
    error: { type: ['string', 'null'] },
  },
};
export const executionLogListResponse = {
  type: 'object',
  properties: { data: { type: 'array', items: executionLogResponse }, meta },
};

export const attemptResponse = {
  type: 'object',
  required: ['attempt', 'attemptedAt', 'trigger', 'httpStatus', 'durationMs', 'waitedMs', 'error', 'responseBody'],
  properties: {
    attempt: { type: 'integer', description: 'Its number within the delivery: 1 for the first' },
    attemptedAt: timestamp,
    trigger: { type: 'string', enum: ['SCHEDULED', 'REDELIVERY', 'RECOVERY'] },
    httpStatus: { type: 'integer', description: '0 when no response came back' },
    durationMs: { type: 'integer', description: 'From the request to its outcome' },
    waitedMs: {
      type: 'integer',
      description: 'How long it waited for a free slot of its endpoint (WEBHOOK_ENDPOINT_CONCURRENCY) first',
    },
    error: { type: ['string', 'null'] },
    responseBody: { type: ['string', 'null'], description: "The first 1 KiB of the receiver's answer" },
  },
};
export const attemptListResponse = {
  type: 'object',
  properties: { data: { type: 'array', items: attemptResponse }, meta },
};
