import { inTransaction } from '../db/transaction';
import type { Orm } from '../db/orm';
import { ApiClientSchema, CustomerSchema } from '../db/entities';
import { lockCustomerRow } from '../db/repositories/customers';
import { CambioError } from '../domain/errors';
import { isUuid } from '../domain/uuid';

export interface CustomerStatus {
  customerId: string;
  name: string;
  disabledAt: string | null;
}

/**
 * Operator action: disable (or enable again) a customer. A disabled customer gets no tokens and its existing tokens
 * stop working within the API's customer cache lifetime, and stay refused after an enable (decision 0231); its data,
 * balances and running operations stay as they are (money in flight still settles or is released by its workflow).
 */
export async function setCustomerDisabled(orm: Orm, customerId: string, disabled: boolean): Promise<CustomerStatus> {
  if (!isUuid(customerId)) throw new CambioError('NOT_FOUND', `customer ${customerId} not found`);
  return inTransaction(orm.em.fork(), async (em) => {
    // Locked before the moment is taken: a token being signed holds the row (FOR SHARE) until it is, so its `iat` is
    // at or before the revocation's second, never after it (decision 0332).
    const customer = (await lockCustomerRow(em, customerId))
      ? await em.findOne(CustomerSchema, { id: customerId })
      : null;
    if (!customer) throw new CambioError('NOT_FOUND', `customer ${customerId} not found`);
    // Disabling twice keeps the first moment; enabling clears it. The disable also revokes every token issued until
    // then, for good: an enable does not bring back a token that may be why the customer was disabled (0231).
    if (disabled && !customer.disabledAt) {
      customer.disabledAt = new Date();
      customer.tokensRevokedAt = customer.disabledAt;
    } else if (!disabled) customer.disabledAt = null;
    // A disable also ends the grace of a secret a rotation replaced: a customer is disabled because its credentials
    // may have leaked, and a replaced secret would get tokens again after the enable (decision 0330).
    if (disabled) {
      await em.nativeUpdate(
        ApiClientSchema,
        { customerId },
        { previousSecretHash: null, previousSecretExpiresAt: null },
      );
    }
    return {
      customerId: customer.id,
      name: customer.name,
      disabledAt: customer.disabledAt ? customer.disabledAt.toISOString() : null,
    };
  });
}
