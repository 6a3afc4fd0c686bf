import { createHash, randomUUID } from 'node:crypto';
import { addOperationState } from '../../db/repositories/operations';
import { systemEm, tenantEm } from '../../db/orm';
import type { Em } from '../../db/orm';
import { SqlBatch } from '../../db/batch';
import { AccountSchema, type InboundPayment, type InboundPaymentStatus, type Quote } from '../../db/entities';
import { addEvent } from '../../db/repositories/events';
import { addDecision, findPayment, listPaymentsForOperators } from '../../db/repositories/inbound-payments';
import { addPosting } from '../../db/repositories/ledger';
import { addMovements } from '../../db/repositories/movements';
import { inTransaction } from '../../db/transaction';
import { CambioError } from '../../domain/errors';
import { attributePostings, returnPostings, settlePostings } from '../../domain/postings';
import { transition } from '../../domain/states';
import { operationEventPayload } from '../../webhooks/operation-event';
import { notFound } from '../errors';
import { amount } from '../../domain/amount';
import { presentInboundPayment } from '../presenters/inbound-payment';
import type { ServiceContext } from './context';
import { requireAssetEnabled } from './operations/checks';
import { createOperation } from './operations/create';

// Operators resolve what sits in the suspense (docs/decisions.md, "Inbound payments"): send it back through its
// rail, or credit it to one of the customer's accounts. Each step runs in one transaction holding the payment's
// row lock, so two operators cannot resolve one payment twice. A payment of the platform's suspense (no customer)
// is resolved in the scope of the customer whose account it is credited to.

/** The payment's customer scope: operators address a payment by id alone. */
async function scopeOfPayment(s: ServiceContext, id: string, creditedAccountId?: string): Promise<Em> {
  const found = await findPayment(systemEm(s.orm), id);
  if (!found) throw notFound('inbound payment');
  if (found.customerId) return tenantEm(s.orm, found.customerId);
  if (!creditedAccountId) return systemEm(s.orm);
  const account = await systemEm(s.orm).findOne(AccountSchema, { id: creditedAccountId });
  if (!account) throw notFound('account');
  return tenantEm(s.orm, account.customerId);
}

async function lockIn(tx: Em, id: string, expected: InboundPaymentStatus): Promise<InboundPayment> {
  const payment = await findPayment(tx, id, { lock: true, withPlatform: true });
  if (!payment) throw notFound('inbound payment');
  if (payment.status !== expected) {
    const message = `the payment is ${payment.status}; only a ${expected} payment can take this step`;
    throw new CambioError('INVALID_STATE', message, { status: payment.status });
  }
  return payment;
}

export async function listPayments(s: ServiceContext, filter: { customerId?: string; status?: string }) {
  return (await listPaymentsForOperators(systemEm(s.orm), filter)).map(presentInboundPayment);
}

/**
 * RETURNING: a return of an UNMATCHED payment is in flight, with an end-to-end id of its own; the money stays in
 * the suspense until the rail confirms (`completeReturn`) or refuses (`failReturn`).
 */
export async function startReturn(s: ServiceContext, id: string, reason: string) {
  const em = await scopeOfPayment(s, id);
  return inTransaction(em, async (tx) => {
    await lockIn(tx, id, 'UNMATCHED');
    const batch = new SqlBatch();
    const returnE2e = returnEndToEndId(id, new Date());
    addDecision(batch, id, {
      status: 'RETURNING',
      returnEndToEndId: returnE2e,
      returnReason: reason,
      returnFailure: null,
    });
    await batch.run(tx);
    return presentInboundPayment((await findPayment(tx, id, { withPlatform: true }))!);
  });
}

/** RETURNED: the rail sent it back; it leaves the suspense through its rail (a DEBIT). A repeat changes nothing. */
export async function completeReturn(s: ServiceContext, id: string) {
  const em = await scopeOfPayment(s, id);
  return inTransaction(em, async (tx) => {
    const current = await findPayment(tx, id, { withPlatform: true });
    if (current?.status === 'RETURNED') return presentInboundPayment(current);
    const payment = await lockIn(tx, id, 'RETURNING');
    const batch = new SqlBatch();
    addPosting(batch, {
      key: `inbound:${id}:return`,
      operationId: null,
      customerId: payment.customerId,
      description: `inbound payment returned: ${payment.returnReason ?? ''}`.trim(),
      postings: returnPostings(payment),
    });
    addDecision(batch, id, { status: 'RETURNED' });
    await batch.run(tx);
    return presentInboundPayment((await findPayment(tx, id, { withPlatform: true }))!);
  });
}

/** The rail refused the return: UNMATCHED again, in the suspense, with the reason. */
export async function failReturn(s: ServiceContext, id: string, failure: string) {
  const em = await scopeOfPayment(s, id);
  return inTransaction(em, async (tx) => {
    await lockIn(tx, id, 'RETURNING');
    const batch = new SqlBatch();
    addDecision(batch, id, { status: 'UNMATCHED', returnFailure: failure });
    await batch.run(tx);
    return presentInboundPayment((await findPayment(tx, id, { withPlatform: true }))!);
  });
}

/**
 * `cambio payment return`: a rail with no connector sends nothing itself (the operator has returned it at the bank),
 * so the return is started and completed at once, as two commits: a crash between them leaves it RETURNING, in the
 * suspense, and the command run again completes it.
 */
export async function returnPayment(s: ServiceContext, id: string, reason: string) {
  const found = await findPayment(systemEm(s.orm), id);
  if (found?.status !== 'RETURNING') await startReturn(s, id, reason);
  return completeReturn(s, id);
}

/**
 * CREDITED: a DEPOSIT of `accountId` (the payment's customer's), 1:1 in the payment's asset, COMPLETED at once with
 * its events and report movements, funded from the suspense. The asset must be enabled on the account.
 */
export async function creditPayment(s: ServiceContext, id: string, accountId: string) {
  const em = await scopeOfPayment(s, id, accountId);
  return inTransaction(em, async (tx) => {
    const payment = await lockIn(tx, id, 'UNMATCHED');
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
        if (!payment.customerId) {
          addPosting(batch, {
            key: `inbound:${payment.id}:attribute`,
            operationId: op.id,
            customerId: op.customerId,
            description: "inbound payment attributed from the platform's suspense",
            postings: attributePostings({ customerId: op.customerId, asset: payment.asset, amount: payment.amount }),
          });
        }
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
        addDecision(batch, payment.id, { status: 'CREDITED', creditOperationId: op.id, creditAccountId: op.accountId });
      },
    });
    return { payment: presentInboundPayment((await findPayment(tx, id, { withPlatform: true }))!), operation };
  });
}

/** A PIX end-to-end id for the return: E + participant ISPB (8) + yyyyMMddHHmm + 11 characters, 32 in all. */
function returnEndToEndId(paymentId: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 12);
  return `E12345678${stamp}${createHash('sha256').update(`return:${paymentId}`).digest('hex').slice(0, 11)}`;
}
