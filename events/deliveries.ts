import type { SqlBatch } from '../db/batch';
import type { DomainEvent } from '../db/entities';
import { webhookDeliveryWorkflowId } from '../workflows/ids';

/**
 * The event and its fan-out, as one statement of the caller's batch, in the transaction that records the event:
 * one delivery (execution log + outbox row for its workflow, on `webhookTaskQueue`) per subscription of the event's
 * customer that exists now and wants this type. What commits with the event is what gets delivered: the COMMIT
 * wakes the relay that starts the workflows, a rollback sends nothing, and a subscription created later never
 * sees this event.
 */
export function addEventWithDeliveries(batch: SqlBatch, webhookTaskQueue: string, event: DomainEvent): void {
  const payload = JSON.stringify(event.payload);
  batch.add(
    `with event as (
       insert into events (id, customer_id, type, resource_type, resource_id, payload, dedupe_key, at_time, created_at)
       values (?, ?, ?, ?, ?, ?::json, ?, ?, ?)
       returning id
     ),
     delivery as (
       insert into execution_logs (id, customer_id, subscription_id, event_id, message_id, event_type, url, payload,
         http_status, status, error, attempts, created_at, updated_at)
       -- One id for the message across every attempt and redelivery: receivers dedupe on it.
       select gen_random_uuid(), s.customer_id, s.id, event.id, 'msg_' || replace(gen_random_uuid()::text, '-', ''), ?, s.url, ?,
         0, 'PENDING', null, 0, ?, ?
       from event, webhook_subscriptions s
       -- The live, ACTIVE subscriptions that want this type (some resource whose events list it): a DISABLED one
       -- gets no log and no delivery for events recorded while it is disabled.
       where s.customer_id = ? and s.deleted_at is null and s.status = 'ACTIVE' and s.resources @> ?::jsonb
       returning id, event_type, url
     )
     insert into workflow_starts (workflow_id, workflow_type, task_queue, args, search_attributes, summary, created_at)
     select ? || delivery.id, 'webhookDeliveryWorkflow', ?, jsonb_build_array(jsonb_build_object('executionLogId', delivery.id)), ?::jsonb,
       'WEBHOOK ' || delivery.event_type || ' to ' || delivery.url, ?
     from delivery`,
    [
      event.id, event.customerId, event.type, event.resourceType, event.resourceId, payload, event.dedupeKey, event.atTime, event.createdAt,
      event.type, payload, event.createdAt, event.createdAt,
      event.customerId, JSON.stringify([{ events: [event.type] }]),
      webhookDeliveryWorkflowId(''), webhookTaskQueue, JSON.stringify({ CustomerId: event.customerId }), event.createdAt,
    ],
  );
}
