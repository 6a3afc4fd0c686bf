// Customers (table `customers`): through the ORM. A customer is the tenant itself, so its entity has no tenant
// filter: a customer is addressed by its id, which the caller got from its credentials or an operator.
import { CustomerSchema } from '../entities';
import type { Em } from '../orm';

/** Whether the customer exists and is not disabled, as the database has it now. */
export async function isCustomerActive(em: Em, customerId: string): Promise<boolean> {
  const customer = await em.fork().findOne(CustomerSchema, { id: customerId }, { fields: ['disabledAt'] });
  return customer !== null && customer.disabledAt === null;
}
