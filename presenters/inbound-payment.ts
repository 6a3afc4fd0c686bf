import type { Page } from '../lists/run-list';
import type { InboundPayment } from '../db/entities';
import { amount } from '../domain/amount';

/**
 * Decision 0076: the record as customers and operators read it. The facts as they arrived
 * (`amount`, `operationId`, `accountId`, `rail`, `endToEndId`), then the resolution in fields of its own.
 */
export function presentInboundPayment(p: InboundPayment) {
  return {
    id: p.id,
    customerId: p.customerId,
    operationId: p.operationId,
    accountId: p.accountId,
    amount: amount(p.amount, p.asset),
    rail: p.rail,
    endToEndId: p.endToEndId,
    status: p.status,
    /** CRYPTO: the chain's facts about the transfer (PENDING counts its confirmations). */
    chain:
      p.blockHash !== null && p.blockHash !== undefined
        ? {
            confirmations: p.confirmations ?? 0,
            blockNumber: String(p.blockNumber),
            blockHash: p.blockHash,
            tokenUnits: String(p.tokenUnits),
          }
        : null,
    /** The matched record an overpayment's excess was split from; null for a payment as the rail reported it. */
    remainderOf: p.remainderOf,
    /** Who sent it, as the rail's record shows (TED: the sending account and its owner's CNPJ or CPF). */
    payer: p.payer ?? null,
    /** MATCHED: what its deposit used, when less than received (the rest is a remainder record). */
    matchedAmount: p.matchedAmount ? amount(p.matchedAmount, p.asset) : null,
    /** CREDITED: the DEPOSIT an operator's credit created, and its account. */
    credit: p.creditOperationId ? { operationId: p.creditOperationId, accountId: p.creditAccountId } : null,
    /**
     * RETURNED (or RETURNING, or UNMATCHED after a refused return): the return's end-to-end id (null when the rail
     * refused it before giving one), why, and a refusal.
     */
    returned:
      p.returnEndToEndId || p.returnFailure
        ? { endToEndId: p.returnEndToEndId, reason: p.returnReason, failure: p.returnFailure }
        : null,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

/** A page of inbound payments as the list shows it. */
export const presentInboundPayments = (page: Page<InboundPayment>) => ({
  data: page.data.map(presentInboundPayment),
  meta: page.meta,
});
