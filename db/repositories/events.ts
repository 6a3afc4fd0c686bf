// Events and their webhook deliveries. How it reaches Postgres: the record of an event is one hand-written
// statement of the caller's batch (db/batch.ts), in the transaction of the state change it reports; the purge goes
// straight through the driver (db/raw.ts), outside any transaction. Tenant: an event carries its customer, taken
// from the row whose change it reports (already read in the caller's scope); the fan-out reaches only that
// customer's subscriptions. The purge is system-wide on purpose (a system-scoped EntityManager).
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config';
import type { Em } from '../orm';
import type { DomainEvent } from '../entities';
import { webhookDeliveryWorkflowId } from '../../workflows/ids';
import { SqlBatch } from '../batch';
import { numbered, rawQuery } from '../raw';
import { outboxInsert } from './outbox';

type NewEvent = Pick<DomainEvent, 'customerId' | 'type' | 'resourceType' | 'resourceId' | 'payload' | 'dedupeKey'> & {
  atTime: Date;
};

/** Where delivery workflows go: the config (a bare task queue name would too easily be the operations' queue). */
export type DeliveryQueues = Pick<Config, 'webhookTaskQueue'>;

/**
 * Records an event in the caller's transaction, with its webhook deliveries (`addEvent`), whose
 * workflows the workers of the webhook task queue start once it commits. `dedupeKey` (unique) names the
 * transition, e.g. `${operationId}:COMPLETED`, so a retried activity cannot record it twice: callers only write the
 * event together with the state change, and the state change itself is skipped on retry.
 */
export async function recordEvent(em: Em, queues: DeliveryQueues, e: NewEvent): Promise<void> {
  const batch = new SqlBatch();
  addEvent(batch, queues, e);
  await batch.run(em);
}

// The event and its fan-out in one statement. Parameters, in order: the event's columns; the delivery's event
// type, payload and timestamps; the customer and the type (the subscriptions that want it); the outbox row's
// workflow id prefix, task queue, search attributes and creation time.
const EVENT_WITH_DELIVERIES = `with event as (
       insert into events (id, customer_id, type, resource_type, resource_id, payload, dedupe_key, at_time, created_at)
       values (?, ?, ?, ?, ?, ?::json, ?, ?, ?)
       returning id
     ),
     delivery as (
       insert into execution_logs (id, customer_id, subscription_id, event_id, message_id, event_type, url, payload,
         http_status, status, error, attempts, created_at, updated_at)
       -- One id for the message across every attempt and redelivery: receivers dedupe on it.
       -- A DISABLED subscription's delivery is due all the same: it is logged FAILED SUBSCRIPTION_DISABLED with no
       -- attempt and no workflow, so the log list shows it and recover sends it once the subscription is ACTIVE.
       select gen_random_uuid(), s.customer_id, s.id, event.id, 'msg_' || replace(gen_random_uuid()::text, '-', ''),
         ?, s.url, ?, 0, case when s.status = 'ACTIVE' then 'PENDING' else 'FAILED' end,
         case when s.status = 'ACTIVE' then null else 'SUBSCRIPTION_DISABLED' end, 0, ?, ?
       from event, webhook_subscriptions s
       -- The live subscriptions that want this type: includeAll ones (the catalogue as it is now, not the list they
       -- stored when created: a type added since is theirs too), or some resource whose events list it.
       where s.customer_id = ? and s.deleted_at is null and (s.include_all or s.resources @> ?::jsonb)
       returning id, event_type, url, status
     )
     ${outboxInsert(
       {
         workflowId: '? || delivery.id',
         workflowType: "'webhookDeliveryWorkflow'",
         taskQueue: '?',
         args: "jsonb_build_array(jsonb_build_object('executionLogId', delivery.id))",
         searchAttributes: '?::jsonb',
         summary: "'WEBHOOK ' || delivery.event_type || ' to ' || delivery.url",
         createdAt: '?::timestamptz',
       },
       "delivery where delivery.status = 'PENDING'",
     )}`;

/**
 * `recordEvent` as a statement of the caller's batch: the event and its fan-out, one delivery (execution log and
 * outbox row for its workflow, on the webhook task queue) per subscription of the event's customer that exists now
 * and wants this type. What commits with the event is what gets delivered: the COMMIT wakes the relay that starts
 * the workflows, a rollback sends nothing, and a subscription created later never sees this event.
 */
export function addEvent(batch: SqlBatch, queues: DeliveryQueues, e: NewEvent): void {
  // The event's own created_at is provisional: a trigger stamps it at COMMIT, in commit order (decision 0238).
  const event: DomainEvent = { id: randomUUID(), ...e, createdAt: new Date() };
  const payload = JSON.stringify(event.payload);
  batch.add(EVENT_WITH_DELIVERIES, [
    event.id,
    event.customerId,
    event.type,
    event.resourceType,
    event.resourceId,
    payload,
    event.dedupeKey,
    event.atTime,
    event.createdAt,
    event.type,
    payload,
    event.createdAt,
    event.createdAt,
    event.customerId,
    JSON.stringify([{ events: [event.type] }]),
    webhookDeliveryWorkflowId(''),
    queues.webhookTaskQueue,
    JSON.stringify({ CustomerId: event.customerId }),
    event.createdAt,
  ]);
}

// One purge statement deletes at most this many rows, so it never holds many row locks or a long transaction.
const PURGE_BATCH = 1000;

const PURGE = numbered(`with gone as (
    delete from events
    where id in (select id from events where created_at < ? order by created_at limit ? for update skip locked)
    returning 1
  )
  select count(*)::int as n from gone`);

/**
 * Deletes events recorded before `cutoff` (EVENT_RETENTION_DAYS), across customers (a system-scoped
 * EntityManager), in batches of PURGE_BATCH until none is left; returns how many went. Execution logs are not
 * touched: each keeps its own copy of the body it sent (`execution_logs.payload`), so logs, redelivery and recover
 * never need the event row, and they are kept as before. Straight through the driver, outside any transaction:
 * each batch commits on its own, and several workers purging at once only find fewer rows.
 */
export async function purgeEventsBefore(em: Em, cutoff: Date): Promise<number> {
  let purged = 0;
  for (;;) {
    const rows = await rawQuery<{ n: number }>(em, PURGE, [cutoff, PURGE_BATCH]);
    purged += rows[0].n;
    if (rows[0].n < PURGE_BATCH) return purged;
  }
}
