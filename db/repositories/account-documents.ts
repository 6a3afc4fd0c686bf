// Onboarding documents (table `account_documents`) as a customer's storage: the bytes its documents take. The
// documents themselves are written and read through the ORM (services/account-onboarding.ts). Tenant: the scope's
// customer (`tenantOf`).
import { Em, tenantOf } from '../orm';
import { lockUntilTransactionEnds } from '../transaction-lock';

/**
 * The bytes the scope's customer's documents take, under a transaction lock per customer held until the caller's
 * transaction ends, so that two uploads at once (of one account or of two) cannot both pass a budget only one fits
 * (decision 0350). Read from the index on (customer_id) that carries size_bytes, never the contents.
 */
export async function documentBytesLocked(em: Em): Promise<number> {
  const customerId = tenantOf(em);
  await lockUntilTransactionEnds(em, `cambio:documents:${customerId}`);
  const rows = (await em.execute(
    'select coalesce(sum(size_bytes), 0)::bigint::text as bytes from account_documents where customer_id = ?',
    [customerId],
  )) as Array<{ bytes: string }>;
  return Number(rows[0].bytes);
}
