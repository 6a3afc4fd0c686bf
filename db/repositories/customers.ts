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

/** The customers a name names, as `cambio customer create` compares names: trimmed, in any case (decision 0267). */
export interface NamedCustomer {
  id: string;
  disabled: boolean;
}

/**
 * Holds, until the transaction ends, the right to create a customer of this name: a second `customer create` of the
 * same name waits here, then finds the first one's customer committed (each statement reads anew under READ
 * COMMITTED), so two runs at once never make two customers.
 */
export async function lockCustomerName(tx: Em, name: string): Promise<void> {
  await tx.execute(`select pg_advisory_xact_lock(hashtextextended('cambio:customer-name:' || lower(btrim(?)), 0))`, [
    name,
  ]);
}

/** Every customer of this name, oldest first (names were never unique before decision 0267: there may be several). */
export async function customersNamed(tx: Em, name: string): Promise<NamedCustomer[]> {
  const rows = (await tx.execute(
    `select id, disabled_at from customers where lower(btrim(name)) = lower(btrim(?)) order by created_at, id`,
    [name],
  )) as { id: string; disabled_at: Date | null }[];
  return rows.map((r) => ({ id: r.id, disabled: r.disabled_at != null }));
}
