// The second way a provider's payment finds its deposit (rails/rail.ts `matchBy: 'payer'`; TED, ../shared/spec/
// decisions.md "TED from the customer's own bank account"): no charge of ours names the deposit, so the payer does.
// The payer's tax id first names its customer: the one customer owning accounts under it (decision 0161). A credit
// completes that customer's oldest deposit on its rail open when the credit was received (REQUESTED, its window not
// ended then: decision 0318) whose account owner's tax id is the payer's and whose quote is exactly the amount
// received; anything else is UNMATCHED, that customer's, or the platform's when no
// customer or several own the tax id: then no deposit completes, whoever's it is (decision 0127).
import { type Em, systemEm } from '../db/orm';
import type { InboundPayment } from '../db/entities';
import { findPaymentByReference } from '../db/repositories/inbound-payments';
import {
  customerOfTaxId,
  customerOwnsTaxId,
  lockPayerMatching,
  oldestOpenDepositOfPayer,
  payerOfDeposit,
} from '../db/repositories/payer-deposits';
import { inTransaction } from '../db/transaction';
import { CambioError } from '../domain/errors';
import { Dec } from '../domain/money';
import type { ReceivedPayment } from '../rails/rail';
import { railAsset } from '../rails/registry';
import { knownReceipt, type KnownReceipt, requireProviderAmount } from './provider-amount';
import { recordInboundPaymentOnce, type SettleContext } from './record-and-decide';

/**
 * Records one received payment matched by its payer, in one transaction: the payer's matching lock, the choice of
 * deposit (or customer) and the record with its arrival posting and decision row commit together, so two polls
 * that list the same credit, or two credits of one payer, never take one deposit twice. A reference recorded
 * already is that record (`created` false), whoever recorded it.
 */
export async function recordPayerReceipt(
  s: SettleContext,
  rail: string,
  p: ReceivedPayment,
): Promise<{ payment: InboundPayment; created: boolean; disagrees?: string }> {
  const em = systemEm(s.orm);
  // A stand-in reference names no payment, whatever an operator recorded under its words (decision 0236).
  const known = p.unnamed ? undefined : await findPaymentByReference(em, rail, p.endToEndId);
  if (known) return knownPayerReceipt(em, rail, known, p);
  requireProviderAmount(rail, p);
  const payer = p.payerAccount;
  const asset = p.asset ?? railAsset(rail)!;
  try {
    return await inTransaction(em, async (tx) => {
      if (payer) await lockPayerMatching(tx, rail, payer.taxId);
      // Recorded by a poll that held the lock before us: the same credit, once.
      const recorded = await findPaymentByReference(tx, rail, p.endToEndId);
      if (recorded) return knownPayerReceipt(tx, rail, recorded, p);
      // Only the one customer owning the CNPJ may be paid by it: with two owners, the older deposit could be the one
      // a customer opened under another's CNPJ, and the TED would credit it with the other's money.
      const customerId = payer ? await customerOfTaxId(tx, payer.taxId) : undefined;
      const deposit =
        payer && customerId
          ? await oldestOpenDepositOfPayer(tx, {
              rail,
              customerId,
              taxId: payer.taxId,
              amount: p.amount,
              asset,
              receivedAt: receivedInstant(p),
            })
          : undefined;
      const report = {
        endToEndId: p.endToEndId,
        amount: new Dec(p.amount),
        asset,
        ...(payer ? { payer } : {}),
        ...(deposit ? { operationId: deposit.id } : { customerId: customerId ?? null, rail }),
      };
      return recordInboundPaymentOnce(tx, report, { taskQueue: s.config.taskQueue, actor: `rail:${rail}` });
    });
  } catch (err) {
    // Recorded meanwhile by an operator from the bank statement, for another customer: the first record stands.
    if (!(err instanceof CambioError && err.code === 'RAIL_REFERENCE_IN_USE')) throw err;
    return knownPayerReceipt(em, rail, (await findPaymentByReference(em, rail, p.endToEndId))!, p);
  }
}

/**
 * When the provider received the payment: its own instant, or now when it gave none Cambio can read (then the
 * credit is taken as received when it was read, which never makes a deposit whose window had ended open again).
 */
function receivedInstant(p: ReceivedPayment): Date {
  const at = Date.parse(p.receivedAt);
  return Number.isNaN(at) ? new Date() : new Date(at);
}

/**
 * The record already under the bank's reference, with what it says otherwise than the bank: its amount or asset
 * (`knownReceipt`), or whom it credits. An operator's `payment record` from a statement names no payer, and a TED
 * must come from the deposit owner's own account: one recorded for a deposit (or a customer) the bank's payer does
 * not own has credited someone with another's money. The first record stands; the difference is said, for an
 * operator to settle (decision 0358).
 */
async function knownPayerReceipt(em: Em, rail: string, recorded: InboundPayment, p: ReceivedPayment) {
  const receipt: KnownReceipt = knownReceipt(rail, recorded, p);
  const payer = p.payerAccount;
  if (receipt.disagrees || !payer) return receipt;
  const credited = recorded.payer
    ? recorded.payer.taxId
    : recorded.operationId
      ? await payerOfDeposit(em, recorded.operationId)
      : undefined;
  const otherPayer = credited !== undefined && credited !== payer.taxId;
  // A record in a customer's suspense: theirs if any account of theirs is the payer's, whoever else owns one.
  const otherCustomer =
    credited === undefined &&
    recorded.customerId !== null &&
    !(await customerOwnsTaxId(em, recorded.customerId, payer.taxId));
  if (!otherPayer && !otherCustomer) return receipt;
  const whom = recorded.operationId ? `deposit ${recorded.operationId}` : `customer ${recorded.customerId}`;
  const named = credited ? ` (payer ${credited})` : '';
  const disagrees = `${p.endToEndId} is recorded for ${whom}${named}; ${rail} shows it paid by ${payer.taxId}`;
  return { ...receipt, disagrees };
}
