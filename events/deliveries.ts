import { randomUUID } from 'node:crypto';
import type { Em } from '../db/orm';
import { DomainEvent, ExecutionLogSchema, WebhookSubscriptionSchema } from '../db/entities';
import { enqueueWorkflowStart, startAllAfterCommit, WorkflowStartRequest } from '../api/services/workflow-starts';
import { webhookDeliveryWorkflowId } from '../workflows/ids';

/**
 * Fan-out, in the transaction that records the event: one delivery (execution log + outbox row for its
 * workflow) per subscription of the event's customer that exists now and wants this type. What commits with
 * the event is what gets delivered: a crash after COMMIT loses nothing (the relay starts the workflows), a
 * rollback sends nothing, and a subscription created later never sees this event. Returns the starts to run
 * right after COMMIT.
 */
export async function fanOutEvent(em: Em, event: DomainEvent): Promise<WorkflowStartRequest[]> {
  const subscriptions = await em.find(WebhookSubscriptionSchema, { customerId: event.customerId, deletedAt: null }, { filters: { tenant: { customerId: event.customerId } } });
  const payload = JSON.stringify(event.payload);
  const starts: WorkflowStartRequest[] = [];
  for (const sub of subscriptions) {
    if (!sub.resources.some((r) => r.events.includes(event.type))) continue;
    const id = randomUUID();
    em.create(ExecutionLogSchema, {
      id,
      customerId: event.customerId,
      subscriptionId: sub.id,
      eventId: event.id,
      // One id for the message across every attempt and redelivery: receivers dedupe on it.
      messageId: `msg_${randomUUID().replace(/-/g, '')}`,
      eventType: event.type,
      url: sub.url,
      payload,
      httpStatus: 0,
      status: 'PENDING',
      error: null,
      attempts: 0,
      createdAt: event.createdAt,
      updatedAt: event.createdAt,
    });
    const start: WorkflowStartRequest = {
      workflowId: webhookDeliveryWorkflowId(id),
      workflowType: 'webhookDeliveryWorkflow',
      args: [{ executionLogId: id }],
      searchAttributes: { CustomerId: event.customerId },
    };
    enqueueWorkflowStart(em, start);
    starts.push(start);
  }
  return starts;
}

/**
 * Starts the delivery workflows of a committed transaction now, so the first attempt follows the event within
 * milliseconds; any start that fails here stays in the outbox for the relay.
 */
export const startDeliveries = startAllAfterCommit;
