// What a rail's provider says it received (a notice, or reconciliation's list), recorded as inbound payments: one
// record per end-to-end id system-wide, matched to its deposit by the charge id (PIX: the `txid`), decided as any
// reported payment is; and the provider's word on returns it lists with the payment (`devolucoes`) settles them.
// Shared by every reporter of a rail so that a payment is the same record whichever brought it first.
import { systemEm } from '../db/orm';
import type { InboundPayment } from '../db/entities';
import { paymentOfReference, paymentOfReturn } from '../db/repositories/inbound-payments';
import { depositOfCharge } from '../db/repositories/operations';
import { CambioError } from '../domain/errors';
import { Dec } from '../domain/money';
import type { ReceivedPayment } from '../rails/rail';
import { decideInboundPayment, recordInboundPaymentOnce, type SettleContext } from './inbound-payments';
import { settleReturn } from './returns';

// PIX moves reais only.
const RAIL_ASSET: Record<string, string> = { PIX_KEY: 'BRL' };

export interface RecordedReceipt {
  payment: InboundPayment;
  /** False: a notice (or an earlier run) had recorded it already. */
  created: boolean;
}

/**
 * Records one received payment and has it decided: for the deposit whose charge it paid (matched, or UNMATCHED
 * for that deposit's customer when it no longer takes payments); without a charge of ours, UNMATCHED in the
 * platform's suspense. A reference recorded already is that record (decided again only if still RECEIVED).
 */
export async function recordReceived(s: SettleContext, rail: string, p: ReceivedPayment): Promise<RecordedReceipt> {
  const em = systemEm(s.orm);
  let recorded: RecordedReceipt | undefined;
  const known = await paymentOfReference(em, rail, p.endToEndId);
  if (known) recorded = { payment: known, created: false };
  else {
    const operationId = p.chargeId ? await depositOfCharge(em, p.chargeId) : null;
    const report = {
      endToEndId: p.endToEndId,
      amount: new Dec(p.amount),
      asset: RAIL_ASSET[rail] ?? 'BRL',
      ...(operationId ? { operationId } : { customerId: null, rail }),
    };
    try {
      recorded = await recordInboundPaymentOnce(em, report);
    } catch (err) {
      // Recorded meanwhile by another reporter that attributed it otherwise: the first record stands.
      if (!(err instanceof CambioError && err.code === 'RAIL_REFERENCE_IN_USE')) throw err;
      recorded = { payment: (await paymentOfReference(em, rail, p.endToEndId))!, created: false };
    }
  }
  await decideInboundPayment(s, recorded.payment);
  await settleListedReturns(s, p);
  return recorded;
}

/** Returns of ours the provider lists as final (DEVOLVIDO or NAO_REALIZADO) settle their payment, once. */
export async function settleListedReturns(s: SettleContext, p: ReceivedPayment): Promise<void> {
  for (const r of p.returns) {
    if (r.status === 'PENDING') continue;
    const payment = await paymentOfReturn(systemEm(s.orm), r.returnId);
    if (!payment) continue; // a return asked by someone else (at the PSP's portal): not one of ours to settle
    await settleReturn(s.orm, payment.id, r.returnId, {
      status: r.status === 'RETURNED' ? 'RETURNED' : 'FAILED',
      ...(r.reason ? { reason: r.reason } : {}),
      ...(r.endToEndId ? { endToEndId: r.endToEndId } : {}),
    });
  }
}
