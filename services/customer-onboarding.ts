import { LockMode } from '@mikro-orm/core';
import type { Orm } from '../db/orm';
import { ApiClientSchema } from '../db/entities';
import { customersNamed, lockCustomerName } from '../db/repositories/customers';
import { inTransaction } from '../db/transaction';
import { CambioError } from '../domain/errors';
import { customerName, insertCustomer, newClientSecret, type CreatedCustomer } from './auth';

export interface OnboardedCustomer extends CreatedCustomer {
  /** The customer an earlier run of the same command created, whose secret nobody has used: it got a new one. */
  resumed: boolean;
}

/**
 * Operator action `cambio customer create` (decision 0267): one customer per name, so that the command run again
 * (after a timeout, a crash between its COMMIT and its output) never makes a second customer. A name nobody has is a
 * new customer, `customerId`. A name whose customer was created by an earlier run and never used (one client, its
 * secret never got a token, never rotated, not disabled) is that customer, with a new secret: the one the earlier run
 * may have lost is replaced, so no secret is ever shown twice. Any other customer of the name: CUSTOMER_EXISTS.
 * `named` learns the customer the name names before the transaction ends (the audit row's target commits with it).
 */
export async function onboardCustomer(
  orm: Orm,
  name: string,
  customerId: string,
  named: (customerId: string, resumed: boolean) => void = () => {},
): Promise<OnboardedCustomer> {
  const stored = customerName(name);
  const { clientSecret, secretHash } = await newClientSecret();
  return inTransaction(orm.em.fork(), async (em) => {
    await lockCustomerName(em, stored);
    const existing = await customersNamed(em, stored);
    if (existing.length === 0) {
      named(customerId, false);
      const clientId = await insertCustomer(em, stored, customerId, secretHash);
      return { customerId, clientId, clientSecret, resumed: false };
    }
    const [customer] = existing;
    named(customer.id, false);
    const clients = await em.find(
      ApiClientSchema,
      { customerId: customer.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const [client] = clients;
    const neverUsed =
      existing.length === 1 &&
      !customer.disabled &&
      clients.length === 1 &&
      !client.secretUsedAt &&
      !client.previousSecretHash;
    if (!neverUsed)
      throw customerExists(
        stored,
        existing.map((c) => c.id),
      );
    client.secretHash = secretHash;
    named(customer.id, true);
    return { customerId: customer.id, clientId: client.clientId, clientSecret, resumed: true };
  });
}

/** What the operator can do instead: give the customer a new secret, or name the other customer apart. */
function customerExists(name: string, ids: string[]): CambioError {
  const [id] = ids;
  const which = ids.length === 1 ? `customer ${id}` : `customers ${ids.join(', ')}`;
  return new CambioError(
    'CUSTOMER_EXISTS',
    `a customer named "${name}" exists (${which}), in use since it was created: nothing was created. ` +
      `For a new secret run \`cambio customer rotate-secret ${id}\`; another customer needs another name`,
    { customerId: id, customerIds: ids },
  );
}
