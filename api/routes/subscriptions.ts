import type { RouteTable } from './define';
import type { ServiceContext } from '../../services/context';
import { listQuerySchema } from '../../lists/run-list';
import {
  createdSubscriptionResponse,
  createSubscriptionBody,
  executionLogListQuery,
  attemptListResponse,
  executionLogListResponse,
  executionLogParams,
  executionLogResponse,
  secretResponse,
  subscriptionListResponse,
  subscriptionParams,
  subscriptionResponse,
  updateSubscriptionBody,
} from '../schemas/subscriptions';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  rotateSubscriptionSecret,
  SubscriptionInput,
  SubscriptionPatch,
  updateSubscription,
} from '../../webhooks/subscriptions';
import { getExecutionLog, listAttempts, listExecutionLogs, redeliver } from '../../webhooks/execution-logs';
import { recoverDeliveries, RecoverInput } from '../../webhooks/recovery';
import { recoverBody, recoverResponse } from '../schemas/webhook-recovery';

// No body is expected; an empty object is tolerated, anything else is refused.
const noBody = { type: 'object', additionalProperties: false, maxProperties: 0 } as const;

export function subscriptionRoutes(table: RouteTable, s: ServiceContext): void {
  const tag = 'Webhooks';
  // The signing secret a create or a rotation answers: its key's stored answer keeps it sealed as at rest (0028, 0167).
  const secret = { fields: ['secret'], key: s.config.webhookSecretKey };

  table.add({
    method: 'post',
    path: '/api/subscriptions',
    summary: 'Subscribe a URL to events; the response alone carries the signing secret',
    tag,
    body: createSubscriptionBody,
    bodyRequired: true,
    errors: ['INVALID_WEBHOOK_URL', 'SUBSCRIPTION_LIMIT_REACHED'],
    response: {
      status: 201,
      schema: createdSubscriptionResponse,
      description: 'The Subscription with its secret (shown once)',
    },
    answerSecrets: secret,
    async handler(ctx) {
      ctx.body = await createSubscription(s, ctx.state.em, ctx.request.body as SubscriptionInput);
      ctx.status = 201;
    },
  });

  table.add({
    method: 'get',
    path: '/api/subscriptions',
    summary: 'List subscriptions; filters on url and createdAt',
    tag,
    query: listQuerySchema,
    response: { status: 200, schema: subscriptionListResponse },
    async handler(ctx) {
      ctx.body = await listSubscriptions(ctx.state.em, ctx.state.query, s.config.cursorSecret);
    },
  });

  table.add({
    method: 'get',
    path: '/api/subscriptions/:subscriptionId',
    summary: 'Retrieve a subscription',
    tag,
    params: subscriptionParams,
    response: { status: 200, schema: subscriptionResponse },
    async handler(ctx) {
      ctx.body = await getSubscription(ctx.state.em, ctx.params.subscriptionId);
    },
  });

  table.add({
    method: 'patch',
    path: '/api/subscriptions/:subscriptionId',
    summary: 'Change a subscription; only the given fields change',
    tag,
    params: subscriptionParams,
    body: updateSubscriptionBody,
    bodyRequired: true,
    errors: ['INVALID_WEBHOOK_URL'],
    response: { status: 200, schema: subscriptionResponse },
    async handler(ctx) {
      ctx.body = await updateSubscription(
        s,
        ctx.state.em,
        ctx.params.subscriptionId,
        ctx.request.body as SubscriptionPatch,
      );
    },
  });

  table.add({
    method: 'delete',
    path: '/api/subscriptions/:subscriptionId',
    summary: 'Delete a subscription: future deliveries stop, its execution logs stay readable',
    tag,
    params: subscriptionParams,
    response: { status: 204, description: 'Deleted' },
    async handler(ctx) {
      await deleteSubscription(ctx.state.em, ctx.params.subscriptionId);
      ctx.status = 204;
    },
  });

  table.add({
    method: 'post',
    path: '/api/subscriptions/:subscriptionId/rotate-secret',
    summary: 'Issue a new signing secret; the old one also signs for 24 h (second signature)',
    tag,
    params: subscriptionParams,
    body: noBody,
    bodyRequired: false,
    response: { status: 200, schema: secretResponse, description: 'The new secret (shown once)' },
    answerSecrets: secret,
    async handler(ctx) {
      ctx.body = await rotateSubscriptionSecret(s, ctx.state.em, ctx.params.subscriptionId);
    },
  });

  table.add({
    method: 'get',
    path: '/api/subscriptions/:subscriptionId/executionLogs',
    summary: 'List the deliveries of a subscription (one execution log each), without filters',
    tag,
    params: subscriptionParams,
    query: executionLogListQuery,
    response: { status: 200, schema: executionLogListResponse },
    async handler(ctx) {
      ctx.body = await listExecutionLogs(
        ctx.state.em,
        ctx.params.subscriptionId,
        ctx.state.query,
        s.config.cursorSecret,
      );
    },
  });

  table.add({
    method: 'get',
    path: '/api/subscriptions/:subscriptionId/executionLogs/:executionLogId',
    summary: 'Retrieve one execution log',
    tag,
    params: executionLogParams,
    response: { status: 200, schema: executionLogResponse },
    async handler(ctx) {
      ctx.body = await getExecutionLog(ctx.state.em, ctx.params.subscriptionId, ctx.params.executionLogId);
    },
  });

  table.add({
    method: 'get',
    path: '/api/subscriptions/:subscriptionId/executionLogs/:executionLogId/attempts',
    summary:
      'List every attempt of one delivery (list conventions): when, why, the status, the duration and the first ' +
      "1 KiB of the receiver's answer",
    tag,
    params: executionLogParams,
    query: executionLogListQuery,
    response: { status: 200, schema: attemptListResponse },
    async handler(ctx) {
      ctx.body = await listAttempts(
        ctx.state.em,
        ctx.params.subscriptionId,
        ctx.params.executionLogId,
        ctx.state.query,
        s.config.cursorSecret,
      );
    },
  });

  table.add({
    method: 'post',
    path: '/api/subscriptions/:subscriptionId/executionLogs/:executionLogId/redeliver',
    summary:
      'Send the same message again (same message id and body), one attempt; 409 DELIVERY_IN_PROGRESS ' +
      'while it is being attempted',
    tag,
    params: executionLogParams,
    body: noBody,
    bodyRequired: false,
    errors: ['DELIVERY_IN_PROGRESS', 'INVALID_STATE', 'SUBSCRIPTION_DISABLED'],
    response: { status: 202, schema: executionLogResponse, description: 'The execution log; the attempt follows' },
    async handler(ctx) {
      ctx.body = await redeliver(s, ctx.state.em, ctx.params.subscriptionId, ctx.params.executionLogId);
      ctx.status = 202;
    },
  });

  table.add({
    method: 'post',
    path: '/api/subscriptions/:subscriptionId/recover',
    summary:
      'Send every FAILED delivery created in [since, until) once more (same message id and body); ' +
      'deliveries with an attempt pending are skipped',
    tag,
    params: subscriptionParams,
    body: recoverBody,
    bodyRequired: true,
    errors: ['INVALID_PERIOD', 'SUBSCRIPTION_DISABLED'],
    response: {
      status: 202,
      schema: recoverResponse,
      description: 'How many deliveries were queued; the attempts follow',
    },
    async handler(ctx) {
      ctx.body = await recoverDeliveries(s, ctx.state.em, ctx.params.subscriptionId, ctx.request.body as RecoverInput);
      ctx.status = 202;
    },
  });
}
