// The deposits a payment finds by who paid it (TED: payments/payer-matching.ts), and the customer a tax id belongs
// to. Plain SQL through the caller's EntityManager and transaction, in system scope: a TED names a CNPJ, not a
// customer, so the caller first finds the one customer owning that CNPJ, then looks among that customer's deposits
// only (decision 0161).
import type { Em } from '../orm';
import { ownerBareTaxId } from './accounts';
import { lockUntilTransactionEnds } from '../transaction-lock';

/**
 * Serialises the matching of payments from one payer (`taxId`) until the caller's transaction ends: two credits of
 * one CNPJ read in overlapping polls never both take the same deposit (the second sees the first's record).
 */
export async function lockPayerMatching(em: Em, rail: string, taxId: string): Promise<void> {
  await lockUntilTransactionEnds(em, `payer-match:${rail}:${taxId}`);
}

/**
 * The oldest deposit of `customerId` on `rail` still waiting for its money (REQUESTED) whose funding instruction
 * names `taxId` as its payer and whose quote's source is exactly `amount` `asset`, and that no payment counts toward
 * yet (a record RECEIVED or MATCHED for it: the next credit goes to the next deposit), and whose window had not
 * ended at `receivedAt`, the instant the bank received the credit (decision 0318): a deposit the worker has not expired
 * yet (down, behind) is still REQUESTED after its window, and a TED sent later is not its money. A deposit opened
 * before its instruction carried `expiresAt` has no known end and is open while REQUESTED, as before. Over the
 * partial index `operations_open_ted_deposit_payer_index`. `customerId` is the one customer owning `taxId`
 * (`customerOfTaxId`): another customer's deposit naming the same CNPJ is never taken (decision 0161).
 */
export async function oldestOpenDepositOfPayer(
  em: Em,
  p: { rail: string; customerId: string; taxId: string; amount: string; asset: string; receivedAt: Date },
): Promise<{ id: string; customerId: string } | undefined> {
  const [row] = await em.execute<{ id: string; customer_id: string }[]>(
    `select o.id, o.customer_id from operations o
     where o.type = 'DEPOSIT' and o.status = 'REQUESTED'
       and (o.intent -> 'fundingInstruction' ->> 'rail') = ?
       and (o.intent -> 'fundingInstruction' ->> 'payerTaxId') = ?
       and o.customer_id = ?
       and o.source_asset = ? and o.source_amount = ?::numeric
       and coalesce((o.intent -> 'fundingInstruction' ->> 'expiresAt')::timestamptz, 'infinity') > ?
       and not exists (select 1 from inbound_payments p
                       where p.operation_id = o.id and p.status in ('RECEIVED', 'MATCHED'))
     order by o.created_at, o.id
     limit 1`,
    [p.rail, p.taxId, p.customerId, p.asset, p.amount, p.receivedAt],
  );
  return row ? { id: row.id, customerId: row.customer_id } : undefined;
}

/**
 * The one customer whose ACTIVE accounts are owned by `taxId` (digits; an owner's tax id is compared without its
 * punctuation), or undefined when none or several are: a payment nobody can attribute is the platform's. Only an
 * account a review approved counts (decision 0179): anyone can POST an account naming a CNPJ, and one that nobody
 * checked must neither stop the owner's TEDs reaching its deposits nor be shown the owner's TEDs in its suspense.
 * (A TED deposit is opened only on an ACTIVE account, and an account never leaves ACTIVE.)
 */
export async function customerOfTaxId(em: Em, taxId: string): Promise<string | undefined> {
  const rows = await em.execute<{ customer_id: string }[]>(
    `select distinct a.customer_id from accounts a
     where ${ownerBareTaxId('a')} = ? and a.status = 'ACTIVE'
     limit 2`,
    [taxId],
  );
  return rows.length === 1 ? rows[0].customer_id : undefined;
}

/** The payer a deposit on a payer-matched rail names (its funding instruction's `payerTaxId`), if any. */
export async function payerOfDeposit(em: Em, operationId: string): Promise<string | undefined> {
  const [row] = await em.execute<{ payer: string | null }[]>(
    `select o.intent -> 'fundingInstruction' ->> 'payerTaxId' as payer from operations o where o.id = ?`,
    [operationId],
  );
  return row?.payer ?? undefined;
}

/** Whether `customerId` holds an account, in any state, owned by `taxId` (digits, as `customerOfTaxId` compares). */
export async function customerOwnsTaxId(em: Em, customerId: string, taxId: string): Promise<boolean> {
  const rows = await em.execute(
    `select 1 from accounts a where a.customer_id = ? and ${ownerBareTaxId('a')} = ? limit 1`,
    [customerId, taxId],
  );
  return rows.length > 0;
}
