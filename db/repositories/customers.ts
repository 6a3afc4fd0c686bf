// Customers (table `customers`): through the ORM. A customer is the tenant itself, so its entity has no tenant
// filter: a customer is addressed by its id, which the caller got from its credentials or an operator.
import { ApiClientSchema, CustomerSchema } from '../entities';
import type { Em } from '../orm';

/** Whether the customer exists and is not disabled, as the database has it now. */
export async function isCustomerActive(em: Em, customerId: string): Promise<boolean> {
  const customer = await em.fork().findOne(CustomerSchema, { id: customerId }, { fields: ['disabledAt'] });
  return customer !== null && customer.disabledAt === null;
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
