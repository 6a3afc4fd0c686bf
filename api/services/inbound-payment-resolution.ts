import { createHash, randomUUID } from 'node:crypto';
import { addOperationState } from '../../db/repositories/operations';
import { systemEm, tenantEm } from '../../db/orm';
import type { Em } from '../../db/orm';
import { SqlBatch } from '../../db/batch';
import type { InboundPayment, Quote } from '../../db/entities';
import { addEvent } from '../../db/repositories/events';
import { addDecision, findPayment, listPaymentsForOperators } from '../../db/repositories/inbound-payments';
import { addPosting } from '../../db/repositories/ledger';
import { addMovements } from '../../db/repositories/movements';
import { inTransaction } from '../../db/transaction';
import { CambioError } from '../../domain/errors';
import { returnPostings, settlePostings } from '../../domain/postings';
import { transition } from '../../domain/states';
import { operationEventPayload } from '../../webhooks/operation-event';
import { notFound } from '../errors';
import { amount } from '../../domain/amount';
import { presentInboundPayment } from '../presenters/inbound-payment';
import type { ServiceContext } from './context';
import { requireAssetEnabled } from './operations/checks';
import { createOperation } from './operations/create';

// Operators resolve what sits in a customer's suspense (docs/decisions.md, "Inbound payments"): send it back
// through its rail, or credit it to one of the customer's accounts. Each runs in one transaction holding the
// payment's row lock, so two operators cannot resolve one payment twice.

/** The payment's customer scope: operators address a payment by id alone. */
async function scopeOfPayment(s: ServiceContext, id: string): Promise<Em> {
  const found = await findPayment(systemEm(s.orm), id);
  if (!found) throw notFound('inbound payment');
  return tenantEm(s.orm, found.customerId);
}

async function lockUnmatched(tx: Em, id: string): Promise<InboundPayment> {
  const payment = await findPayment(tx, id, { lock: true });
  if (!payment) throw notFound('inbound payment');
  if (!payment.decided || payment.status !== 'UNMATCHED') {
    const state = payment.decided ? payment.status : 'not decided yet';
    const message = `the payment is ${state}; only an UNMATCHED payment can be resolved`;
    throw new CambioError('INVALID_STATE', message, { status: payment.status });
  }
  return payment;
}

export async function listPayments(s: ServiceContext, filter: { customerId?: string; status?: string }) {
  return (await listPaymentsForOperators(systemEm(s.orm), filter)).map(presentInboundPayment);
}

/** RETURNED: sent back through its rail as a DEBIT with an end-to-end id of its own; it leaves the suspense. */
export async function returnPayment(s: ServiceContext, id: string, reason: string) {
  const em = await scopeOfPayment(s, id);
  return inTransaction(em, async (tx) => {
    const payment = await lockUnmatched(tx, id);
    const batch = new SqlBatch();
    addPosting(batch, {
      key: `inbound:${id}:return`,
      operationId: null,
      customerId: payment.customerId,
      description: `inbound payment returned: ${reason}`,
      postings: returnPostings(payment),
    });
    const returnE2e = returnEndToEndId(id, new Date());
    addDecision(batch, id, { status: 'RETURNED', returnEndToEndId: returnE2e, returnReason: reason });
    await batch.run(tx);
    return presentInboundPayment((await findPayment(tx, id))!);
  });
}

/**
 * CREDITED: a DEPOSIT of `accountId` (the payment's customer's), 1:1 in the payment's asset, COMPLETED at once with
 * its events and report movements, funded from the suspense. The asset must be enabled on the account.
 */
export async function creditPayment(s: ServiceContext, id: string, accountId: string) {
  const em = await scopeOfPayment(s, id);
  return inTransaction(em, async (tx) => {
    const payment = await lockUnmatched(tx, id);
    const operation = await createOperation(s, tx, {
      type: 'DEPOSIT',
      accountId,
      generateQuote: (account, now): Quote => ({
        id: randomUUID(),
        customerId: account.customerId,
        accountId: account.id,
        sourceAsset: payment.asset,
        sourceAmount: payment.amount,
        targetAsset: payment.asset,
        targetAmount: payment.amount,
        midRate: '1',
        effectiveRate: '1',
        spread: '0',
        feeAmount: null,
        expiresAt: now,
        consumedAt: null,
        consumedBy: null,
        createdAt: now,
      }),
      async plan(_tx, account) {
        requireAssetEnabled(account, payment.asset);
        const intent = { type: 'DEPOSIT', fundingInstruction: { rail: payment.rail }, inboundPaymentId: payment.id };
        return { intent };
      },
      completeAtOnce(batch, op) {
        const at = new Date();
        op.transactions = [
          {
            id: payment.id,
            type: payment.rail === 'PIX_KEY' ? 'PIX' : payment.rail,
            direction: 'CREDIT',
            amount: amount(payment.amount, payment.asset),
            status: 'COMPLETED',
            endToEnd: payment.endToEndId,
            createdAt: payment.createdAt.toISOString(),
          },
        ];
        transition(op, 'PROCESSING', at);
        addPosting(batch, {
          key: `${op.id}:settle`,
          operationId: op.id,
          customerId: op.customerId,
          description: 'DEPOSIT settlement (credited from suspense)',
          postings: settlePostings(op),
        });
        transition(op, 'COMPLETED', at);
        addMovements(batch, op, at);
        addEvent(batch, s.config, {
          customerId: op.customerId,
          type: 'OPERATION_COMPLETED',
          resourceType: 'OPERATION',
          resourceId: op.id,
          dedupeKey: `${op.id}:COMPLETED`,
          atTime: at,
          payload: operationEventPayload(op, at),
        });
        addOperationState(batch, op);
        addDecision(batch, payment.id, { status: 'CREDITED', operationId: op.id, accountId: op.accountId });
      },
    });
    return { payment: presentInboundPayment((await findPayment(tx, id))!), operation };
  });
}

/** A PIX end-to-end id for the return: E + participant ISPB (8) + yyyyMMddHHmm + 11 characters, 32 in all. */
function returnEndToEndId(paymentId: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
  return `E12345678${stamp}${createHash('sha256').update(`return:${paymentId}`).digest('hex').slice(0, 11)}`;
}
