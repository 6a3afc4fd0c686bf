// Customers (table `customers`): through the ORM. A customer is the tenant itself, so its entity has no tenant
// filter: a customer is addressed by its id, which the caller got from its credentials or an operator.
import { ApiClientSchema, CustomerSchema } from '../entities';
import type { Em } from '../orm';

/** What decides whether a customer's token is admitted, as the database has it now. */
export interface CustomerStanding {
  disabled: boolean;
  /** The last disable's moment (decision 0231); null if it was never disabled. */
  tokensRevokedAt: Date | null;
}

/** The customer's standing; undefined when it does not exist. */
export async function customerStanding(em: Em, customerId: string): Promise<CustomerStanding | undefined> {
  const customer = await em
    .fork()
    .findOne(CustomerSchema, { id: customerId }, { fields: ['disabledAt', 'tokensRevokedAt'] });
  if (!customer) return undefined;
  return { disabled: customer.disabledAt != null, tokensRevokedAt: customer.tokensRevokedAt ?? null };
}

/**
 * Notes that the client's current secret (`secretHash`) got a token, once: the first token of a secret writes, the
 * others find it noted. Keyed by the hash too, so a rotation committed meanwhile is not marked used by the old secret.
 */
export async function markSecretUsed(em: Em, clientId: string, secretHash: string): Promise<void> {
  await em
    .fork()
    .nativeUpdate(ApiClientSchema, { clientId, secretHash, secretUsedAt: null }, { secretUsedAt: new Date() });
}

/**
 * Locks the customer's row as an update of its own columns does (FOR NO KEY UPDATE), inside `em`'s transaction: a
 * token being signed (its FOR SHARE) is waited for, the rows that reference the customer (their foreign keys' FOR KEY
 * SHARE: quotes, operations) are not. False when there is no such customer.
 */
export async function lockCustomerRow(em: Em, customerId: string): Promise<boolean> {
  const rows: unknown[] = await em.execute('select 1 from customers where id = ? for no key update', [customerId]);
  return rows.length > 0;
}
