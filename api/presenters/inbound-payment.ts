import type { InboundPayment } from '../../db/entities';
import { amount } from '../../domain/amount';

/** docs/decisions.md, "Inbound payments": the record as customers and operators read it. */
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
    /** The matched record an overpayment's excess was split from; null for a payment as the rail reported it. */
    remainderOf: p.remainderOf,
    /** A RETURNED payment: the end-to-end id it went back with, and why. */
    returned: p.returnEndToEndId ? { endToEndId: p.returnEndToEndId, reason: p.returnReason } : null,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}
