/**
 * Webhook subscriptions (table `webhook_subscriptions`) as the customer's API reads and writes them. Through the ORM
 * (entity reads, a `PESSIMISTIC_WRITE` lock for a change, flush by the caller's transaction). Tenant: the ORM's tenant
 * filter on every read; a new row takes its customer from the EntityManager's scope (`tenantOf`), never from the
 * caller; the list page (SUBSCRIPTION_LIST, run by the list machinery) adds it from the same scope. The delivery
 * attempt's reads and the health bookkeeping are in execution-logs.ts and webhook-recovery.ts.
 */
import { LockMode } from '@mikro-orm/core';
import { WebhookSubscription, WebhookSubscriptionSchema } from '../entities';
import type { Em } from '../orm';
import { tenantOf } from '../orm';
import type { ListResource } from './lists';
import { lockUntilTransactionEnds } from '../transaction-lock';

/** Everything of a new subscription but its customer, which is the EntityManager's. */
export type NewSubscription = Omit<WebhookSubscription, 'customerId'>;

/**
 * How many live (not deleted) subscriptions the EntityManager's customer has, counted under a lock on the customer's
 * subscriptions that its transaction holds until it ends: a create that counts, then adds, cannot race another
 * create of the same customer past the cap (decision 0258). Two statements on purpose: under READ COMMITTED a
 * statement sees what was committed when it began, so a count in the statement that waits for the lock would miss
 * the row the lock's previous holder committed. Other customers' creates take other locks.
 */
export async function countLiveSubscriptionsLocked(em: Em): Promise<number> {
  const customerId = tenantOf(em);
  await lockUntilTransactionEnds(em, `cambio:subscriptions:${customerId}`);
  return em.count(WebhookSubscriptionSchema, { deletedAt: null });
}

/** Persists at the caller's flush (its transaction), for the customer the EntityManager is scoped to. */
export function addSubscription(em: Em, fields: NewSubscription): WebhookSubscription {
  return em.create(WebhookSubscriptionSchema, { ...fields, customerId: tenantOf(em) });
}

/** A live (not deleted) subscription, locked for the change until the caller's transaction ends; null otherwise. */
export function lockLiveSubscription(em: Em, id: string): Promise<WebhookSubscription | null> {
  return em.findOne(WebhookSubscriptionSchema, { id, deletedAt: null }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** A live (not deleted) subscription as stored now (not from the identity map); null otherwise. */
export function findLiveSubscription(em: Em, id: string): Promise<WebhookSubscription | null> {
  return em.findOne(WebhookSubscriptionSchema, { id, deletedAt: null }, { refresh: true });
}

/** A subscription, deleted ones included (their logs stay readable), as stored now; null otherwise. */
export function findSubscription(em: Em, id: string): Promise<WebhookSubscription | null> {
  return em.findOne(WebhookSubscriptionSchema, { id }, { refresh: true });
}

/**
 * GET /api/subscriptions: live subscriptions, filtered on url and createdAt (../shared/spec/decisions.md, "Lists
 * and filters").
 */
export const SUBSCRIPTION_LIST: ListResource<WebhookSubscription> = {
  entity: WebhookSubscriptionSchema,
  from: 'webhook_subscriptions s',
  alias: 's',
  catalogue: {
    url: { type: 'string', sql: 's.url' },
    createdAt: { type: 'timestamp', sql: 's.created_at' },
  },
  where: { sql: 's.deleted_at is null', params: [] },
};
