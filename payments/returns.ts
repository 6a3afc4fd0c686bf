// Returns of inbound payments (decisions 0076, 0080): a return is RETURNING from the moment it is asked until the rail
// confirms it (RETURNED: it leaves the suspense through its rail, a DEBIT) or refuses it (UNMATCHED again, with the
// reason). Here, beside the rest of inbound payments, so that the rails' activities (which learn the outcome from
// the PSP) and the operator's commands reach the same steps. Each step is one transaction holding the payment's row
// lock, in the scope of the payment's customer (or the system's, for the platform's suspense).
import { systemEm, tenantEm, type Em, type Orm } from '../db/orm';
import { SqlBatch } from '../db/batch';
import type { InboundPayment, InboundPaymentStatus } from '../db/entities';
import { addDecision, findPayment } from '../db/repositories/inbound-payments';
import { addPosting } from '../db/repositories/ledger';
import { inTransaction } from '../db/transaction';
import { CambioError, notFound } from '../domain/errors';
import { returnPostings } from '../domain/postings';

/** The scope a payment is resolved in: its customer's, or the system's for the platform's suspense. */
export async function paymentScope(orm: Orm, id: string): Promise<Em> {
  const found = await findPayment(systemEm(orm), id);
  if (!found) throw notFound('inbound payment');
  return found.customerId ? tenantEm(orm, found.customerId) : systemEm(orm);
}

/** The payment, its row locked until COMMIT, if it is `expected`; otherwise 409 INVALID_STATE. */
export async function lockPaymentIn(tx: Em, id: string, expected: InboundPaymentStatus): Promise<InboundPayment> {
  const payment = await findPayment(tx, id, { lock: true, withPlatform: true });
  if (!payment) throw notFound('inbound payment');
  if (payment.status !== expected) {
    const message = `the payment is ${payment.status}; only a ${expected} payment can take this step`;
    throw new CambioError('INVALID_STATE', message, { status: payment.status });
  }
  return payment;
}

/** What the rail said of a return: sent back (with the end-to-end id of the money that left, when it gave one). */
export interface ReturnOutcome {
  status: 'RETURNED' | 'FAILED';
  /** FAILED: why the rail refused it. */
  reason?: string;
  /** The end-to-end id of the return itself (PIX: the devolucao's `rtrId`). */
  endToEndId?: string;
}

/**
 * Which return a step settles: `returnId`, checked under the row lock (a later attempt is not this one's). Without
 * it, only a return that no provider holds (made at the bank): one that carries a provider's return id completes or
 * fails only on that provider's final answer (docs/decisions/0110).
 */
export interface ReturnOf {
  returnId?: string;
  /** The end-to-end id of the return itself (PIX: the devolucao's `rtrId`). */
  endToEndId?: string;
}

async function lockReturning(tx: Em, id: string, of: ReturnOf): Promise<InboundPayment> {
  const payment = await lockPaymentIn(tx, id, 'RETURNING');
  if (of.returnId !== undefined && payment.returnId !== of.returnId) {
    const message = `the payment's return in flight is not ${of.returnId}`;
    throw new CambioError('INVALID_STATE', message, { status: payment.status });
  }
  if (of.returnId === undefined && payment.returnId) {
    const message = `the payment's return ${payment.returnId} is in flight at its provider; only its answer settles it`;
    throw new CambioError('INVALID_STATE', message, { status: payment.status, returnId: payment.returnId });
  }
  return payment;
}

/**
 * RETURNED: the rail sent it back; it leaves the suspense (a DEBIT). A repeat changes nothing. `beforeCommit` sees
 * the returned payment inside the transaction (an operator's audit details commit with it).
 */
export async function completeReturn(
  orm: Orm,
  id: string,
  of: ReturnOf = {},
  beforeCommit?: (returned: InboundPayment) => void,
): Promise<InboundPayment> {
  const em = await paymentScope(orm, id);
  return inTransaction(em, async (tx) => {
    const current = await findPayment(tx, id, { withPlatform: true });
    if (current?.status === 'RETURNED') return current;
    const payment = await lockReturning(tx, id, of);
    const batch = new SqlBatch();
    addPosting(batch, {
      key: `inbound:${id}:return`,
      operationId: null,
      customerId: payment.customerId,
      description: `inbound payment returned: ${payment.returnReason ?? ''}`.trim(),
      postings: returnPostings(payment),
    });
    addDecision(batch, id, { status: 'RETURNED', ...(of.endToEndId ? { returnEndToEndId: of.endToEndId } : {}) });
    await batch.run(tx);
    const returned = (await findPayment(tx, id, { withPlatform: true }))!;
    beforeCommit?.(returned);
    return returned;
  });
}

/** The rail refused the return: UNMATCHED again, in the suspense, with the reason. */
export async function failReturn(orm: Orm, id: string, failure: string, of: ReturnOf = {}): Promise<InboundPayment> {
  const em = await paymentScope(orm, id);
  return inTransaction(em, async (tx) => {
    await lockReturning(tx, id, of);
    const batch = new SqlBatch();
    addDecision(batch, id, {
      status: 'UNMATCHED',
      returnFailure: failure,
      ...(of.endToEndId ? { returnEndToEndId: of.endToEndId } : {}),
    });
    await batch.run(tx);
    return (await findPayment(tx, id, { withPlatform: true }))!;
  });
}

/**
 * The provider's final answer on the return `returnId` of payment `id` (from the activity that polls it, or a
 * notice's `devolucoes`, or reconciliation's list), applied once: a payment no longer RETURNING under that id
 * (settled already by another of them, or a later attempt) is left as it is. Its status after.
 */
export async function settleReturn(
  orm: Orm,
  id: string,
  returnId: string,
  outcome: ReturnOutcome,
): Promise<InboundPaymentStatus> {
  const current = await findPayment(systemEm(orm), id);
  if (!current) throw notFound('inbound payment');
  if (current.status !== 'RETURNING' || current.returnId !== returnId) return current.status;
  try {
    const of = { returnId, endToEndId: outcome.endToEndId };
    const settled =
      outcome.status === 'RETURNED'
        ? await completeReturn(orm, id, of)
        : await failReturn(orm, id, outcome.reason ?? 'the rail refused the return', of);
    return settled.status;
  } catch (err) {
    // Settled meanwhile by another reporter of the same answer: that answer stands.
    if (err instanceof CambioError && err.code === 'INVALID_STATE') {
      return (await findPayment(systemEm(orm), id))!.status;
    }
    throw err;
  }
}
