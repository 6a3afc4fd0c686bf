import { randomUUID } from 'node:crypto';
import type { Em } from '../db/orm';
import { inTransaction } from '../db/transaction';
import { SubscriptionStatus, WebhookSubscription } from '../db/entities';
import {
  addSubscription,
  countLiveSubscriptionsLocked,
  findLiveSubscription,
  lockLiveSubscription,
  SUBSCRIPTION_LIST,
} from '../db/repositories/webhook-subscriptions';
import { HEALTH_RESET } from '../db/repositories/webhook-recovery';
import { allResources, EVENT_TYPES_BY_RESOURCE, ResourceEvents } from './event-types';
import { newWebhookSecret, ROTATION_OVERLAP_MS, sealSecret } from './secrets';
import { checkWebhookUrl, dnsResolve } from './url-policy';
import { ListQuery, runList } from '../lists/run-list';
import { CambioError, notFound, validationError } from '../domain/errors';
import { presentSubscription } from './presenters';
import type { WebhookContext } from './context';

export interface SubscriptionInput {
  url: string;
  includeAll?: boolean;
  resources?: ResourceEvents[];
  allowRetry?: boolean;
}

export type SubscriptionPatch = Partial<SubscriptionInput> & { status?: SubscriptionStatus };

const urlPolicy = (s: WebhookContext) => ({
  allowPrivate: s.config.webhookAllowPrivateUrls,
  resolve: s.resolveHost ?? dnsResolve,
});

/** Names unique, each event belonging to its resource (the schema checked names, events and repeats). */
function checkResources(resources: ResourceEvents[]): ResourceEvents[] {
  const seen = new Set<string>();
  resources.forEach((r, i) => {
    if (seen.has(r.name)) throw validationError(`/resources/${i}/name`, `repeats ${r.name}`);
    seen.add(r.name);
    const allowed: readonly string[] = EVENT_TYPES_BY_RESOURCE[r.name];
    r.events.forEach((e, j) => {
      if (!allowed.includes(e))
        throw validationError(`/resources/${i}/events/${j}`, `${e} is not an event of ${r.name}`);
    });
  });
  return resources.map((r) => ({ name: r.name, events: [...r.events] }));
}

/**
 * The one rule for `includeAll` and `resources`, for create and PATCH alike: given resources are always checked
 * (a PATCH of an includeAll subscription too, or it would store anything); includeAll then subscribes to everything;
 * otherwise the resources are required. `current` is what a PATCH keeps when it gives no resources.
 */
function resolveResources(
  includeAll: boolean,
  given: ResourceEvents[] | undefined,
  current?: ResourceEvents[],
): ResourceEvents[] {
  const checked = given && checkResources(given);
  if (includeAll) return allResources();
  const resources = checked ?? current;
  if (!resources) throw validationError('/resources', 'is required when includeAll is false');
  return resources;
}

/** A live (not deleted) subscription of the caller, locked for the change; 404 otherwise. */
async function lockLive(em: Em, id: string): Promise<WebhookSubscription> {
  const sub = await lockLiveSubscription(em, id);
  if (!sub) throw notFound('subscription');
  return sub;
}

/**
 * 201 with the subscription and its signing secret, the only time the secret is shown. A customer with
 * WEBHOOK_SUBSCRIPTIONS_MAX live subscriptions (paused ones count: their deliveries are still logged) gets 422
 * SUBSCRIPTION_LIMIT_REACHED: every event fans out to each of them, and that work must slow only their customer.
 */
export async function createSubscription(s: WebhookContext, em: Em, input: SubscriptionInput) {
  const includeAll = input.includeAll ?? false;
  const resources = resolveResources(includeAll, input.resources);
  await checkWebhookUrl(input.url, urlPolicy(s));
  const secret = newWebhookSecret();
  const now = new Date();
  const limit = s.config.webhookSubscriptionsMax;
  const sub = await inTransaction(em, async (tx) => {
    if ((await countLiveSubscriptionsLocked(tx)) >= limit) {
      const message = `a customer may have at most ${limit} subscriptions; delete one first`;
      throw new CambioError('SUBSCRIPTION_LIMIT_REACHED', message, { limit });
    }
    return addSubscription(tx, {
      id: randomUUID(),
      url: input.url,
      includeAll,
      resources,
      allowRetry: input.allowRetry ?? false,
      secretEncrypted: sealSecret(secret, s.config.webhookSecretKey),
      previousSecretEncrypted: null,
      previousSecretExpiresAt: null,
      deletedAt: null,
      status: 'ACTIVE',
      ...HEALTH_RESET,
      createdAt: now,
      updatedAt: now,
    });
  });
  return { ...presentSubscription(sub), secret };
}

/**
 * Only the given fields change. Turning includeAll off needs the resources to keep. `status` ACTIVE re-enables
 * (failure tracking starts afresh), DISABLED pauses: nothing is delivered until it is ACTIVE again.
 */
export async function updateSubscription(s: WebhookContext, em: Em, id: string, patch: SubscriptionPatch) {
  if (patch.url !== undefined) await checkWebhookUrl(patch.url, urlPolicy(s));
  const sub = await inTransaction(em, async (tx) => {
    const sub = await lockLive(tx, id);
    const includeAll = patch.includeAll ?? sub.includeAll;
    // The old list of an includeAll subscription was "everything": turning it off must name what to keep.
    const kept = sub.includeAll ? undefined : (sub.resources as ResourceEvents[]);
    sub.resources = resolveResources(includeAll, patch.resources, kept);
    sub.includeAll = includeAll;
    if (patch.url !== undefined) sub.url = patch.url;
    if (patch.allowRetry !== undefined) sub.allowRetry = patch.allowRetry;
    sub.updatedAt = new Date();
    if (patch.status === 'ACTIVE' && sub.status !== 'ACTIVE') Object.assign(sub, { status: 'ACTIVE', ...HEALTH_RESET });
    if (patch.status === 'DISABLED' && sub.status !== 'DISABLED') {
      Object.assign(sub, { status: 'DISABLED', disabledAt: sub.updatedAt, disabledReason: PAUSED_BY_CUSTOMER });
    }
    return sub;
  });
  return presentSubscription(sub);
}

export const PAUSED_BY_CUSTOMER = 'paused by the customer (PATCH status DISABLED)';

/** Stops future deliveries; the row stays (soft delete) so its execution logs remain readable. */
export async function deleteSubscription(em: Em, id: string): Promise<void> {
  await inTransaction(em, async (tx) => {
    const sub = await lockLive(tx, id);
    sub.deletedAt = new Date();
    sub.updatedAt = sub.deletedAt;
  });
}

/**
 * A new secret signs from now on; the one it replaces keeps signing for 24 h (second signature), so receivers
 * can switch over. Rotating again within the overlap drops the oldest secret.
 */
export async function rotateSubscriptionSecret(s: WebhookContext, em: Em, id: string): Promise<{ secret: string }> {
  const secret = newWebhookSecret();
  await inTransaction(em, async (tx) => {
    const sub = await lockLive(tx, id);
    const now = new Date();
    sub.previousSecretEncrypted = sub.secretEncrypted;
    sub.previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    sub.secretEncrypted = sealSecret(secret, s.config.webhookSecretKey);
    sub.updatedAt = now;
  });
  return { secret };
}

export async function getSubscription(em: Em, id: string) {
  const sub = await findLiveSubscription(em, id);
  if (!sub) throw notFound('subscription');
  return presentSubscription(sub);
}

export async function listSubscriptions(em: Em, query: ListQuery, cursorSecret: string) {
  const page = await runList(em, SUBSCRIPTION_LIST, query, cursorSecret);
  return { data: page.data.map(presentSubscription), meta: page.meta };
}
