import { randomUUID } from 'node:crypto';
import { addOperationState } from '../db/repositories/operations';
import { systemEm, tenantEm } from '../db/orm';
import type { Em } from '../db/orm';
import { SqlBatch } from '../db/batch';
import { AccountSchema, type InboundPayment, type Quote } from '../db/entities';
import { addEvent } from '../db/repositories/events';
import { addDecision, findPayment, listPaymentsForOperators } from '../db/repositories/inbound-payments';
import { addPosting } from '../db/repositories/ledger';
import { addWorkflowStart } from '../db/repositories/outbox';
import type { AssetCode } from '../domain/assets';
import { formatAmount } from '../domain/money';
import { completeReturn as completeRailReturn, failReturn as failRailReturn, lockPaymentIn } from '../payments/returns';
import { newReturnId } from '../rails/pix/ids';
import { railEntry, railTransactionType } from '../rails/registry';
import { paymentReturnWorkflowId } from '../workflows/ids';
import { addMovements } from '../db/repositories/movements';
import { BeforeCommit, inTransaction } from '../db/transaction';
import { attributePostings, settlePostings } from '../domain/postings';
import { transition } from '../domain/states';
import { operationEventPayload } from '../webhooks/operation-event';
import { notFound } from '../domain/errors';
import { CambioError } from '../domain/errors';
import { amount } from '../domain/amount';
import { returnEndToEndId } from '../domain/end-to-end-ids';
import type { ServiceContext } from './context';
import { requireAssetEnabled } from './operations/checks';
import { createOperation } from './operations/create';

// Operators resolve what sits in the suspense (decisions 0048, 0076): send it back through its
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

export interface CreditedPayment {
  payment: InboundPayment;
  operation: Awaited<ReturnType<typeof createOperation>>;
}

const lockIn = lockPaymentIn;

export async function listPayments(s: ServiceContext, filter: { customerId?: string; status?: string }) {
  return listPaymentsForOperators(systemEm(s.orm), filter);
}

/** Who sends a payment of `rail` back (RailEntry.returnedBy; a connector rail's provider by default). */
const returnedBy = (rail: string): 'provider' | 'operator' | 'outside' => {
  const entry = railEntry(rail);
  return entry?.returnedBy ?? (entry?.recordedBy === 'connector' ? 'provider' : 'operator');
};

/** A return of a payment on `rail` goes through its provider (a connector sends it), else the operator does it. */
export const returnsThroughProvider = (config: ServiceContext['config'], rail: string): boolean =>
  returnedBy(rail) === 'provider' && !!railEntry(rail)?.hasProvider(config);

/**
 * The rails whose payments go back only as the operator states (`--outside --reference`) when no provider sends
 * them: those whose connector sends a payment back (docs/decisions/0110: PIX, and CRYPTO from the hot wallet,
 * decision 0136) while this deployment has no provider for them, and TED, whose provider only reads (decisions 0129,
 * 0331). BOLETO is returned at the bank with an end-to-end id of its own.
 */
const outsideUnlessProvider = (rail: string): boolean => returnedBy(rail) !== 'operator';

/** `cambio payment return --outside --reference REF`: the operator states the money went back outside Cambio. */
export interface OutsideReturn {
  /** The bank's reference of the money that left (kept as the return's end-to-end id). */
  reference: string;
}

// A bank's reference, kept as the return's end-to-end id (inbound_payments.return_end_to_end_id, which is wider:
// a CRYPTO return's transaction hash is 66 characters).
const MAX_REFERENCE_LENGTH = 64;

function checkReference(reference: string): void {
  if (reference.trim() === reference && reference.length > 0 && reference.length <= MAX_REFERENCE_LENGTH) return;
  const message = `--reference must be 1 to ${MAX_REFERENCE_LENGTH} characters, without surrounding spaces`;
  throw new CambioError('VALIDATION_ERROR', message, { errors: [{ path: '--reference', message }] });
}

function railNotConfigured(rail: string): CambioError {
  if (returnedBy(rail) === 'outside') {
    return new CambioError(
      'RAIL_NOT_CONFIGURED',
      `a ${rail} payment is returned at the bank, not through Cambio: nothing was sent; send it back there and say ` +
        'so with --outside --reference REF',
      { rail },
    );
  }
  const setting = railEntry(rail)?.providerSetting ?? 'PIX_PSP_URL';
  return new CambioError(
    'RAIL_NOT_CONFIGURED',
    `no PSP is configured for ${rail} (${setting}): a ${rail} payment is returned through its PSP, so nothing was ` +
      'sent; if the money was returned at the bank, say so with --outside --reference REF',
    { rail },
  );
}

/**
 * RETURNING: a return of an UNMATCHED payment is in flight; the money stays in the suspense until the rail confirms
 * (`completeReturn`) or refuses (`failReturn`). Decided by the payment's rail (docs/decisions/0110): through its
 * provider, our return id is written with it and the return's workflow is an outbox row of the same transaction (it
 * sends the return and learns its outcome); a rail with a connector but no provider configured refuses
 * (RAIL_NOT_CONFIGURED, nothing changes) unless the operator states the money went back `outside`, whose reference
 * is the return's end-to-end id; a rail without a connector (returned at the bank), an end-to-end id of its own.
 */
export async function startReturn(
  s: ServiceContext,
  id: string,
  reason: string,
  beforeCommit?: BeforeCommit<InboundPayment>,
  outside?: OutsideReturn,
) {
  if (outside) checkReference(outside.reference);
  const em = await scopeOfPayment(s, id);
  return inTransaction(em, async (tx) => {
    const payment = await lockIn(tx, id, 'UNMATCHED');
    const batch = new SqlBatch();
    const rail = payment.rail;
    if (!outside && returnsThroughProvider(s.config, rail)) {
      const returnId = newReturnId();
      addDecision(batch, id, { status: 'RETURNING', returnId, returnReason: reason, returnFailure: null });
      addWorkflowStart(batch, s.config.taskQueue, {
        workflowId: paymentReturnWorkflowId(returnId),
        workflowType: 'paymentReturnWorkflow',
        args: [{ paymentId: id, returnId }],
        searchAttributes: payment.customerId ? { CustomerId: payment.customerId } : {},
        summary: `RETURN ${formatAmount(payment.amount, payment.asset as AssetCode)} ${payment.asset} via ${rail}`,
      });
    } else if (!outside && outsideUnlessProvider(payment.rail)) {
      throw railNotConfigured(payment.rail);
    } else {
      addDecision(batch, id, {
        status: 'RETURNING',
        returnEndToEndId: outside ? outside.reference : returnEndToEndId(id, new Date()),
        returnReason: reason,
        returnFailure: null,
        returnId: null,
      });
    }
    await batch.run(tx);
    const started = (await findPayment(tx, id, { withPlatform: true }))!;
    beforeCommit?.(started);
    return started;
  });
}

/**
 * RETURNED: the money went back outside any provider (at the bank); it leaves the suspense (a DEBIT). A repeat
 * changes nothing. A return that carries a provider's return id is refused here: only the provider's answer settles
 * it (payments/returns.ts).
 */
export async function completeReturn(
  s: Pick<ServiceContext, 'orm'>,
  id: string,
  beforeCommit?: BeforeCommit<InboundPayment>,
) {
  return completeRailReturn(s.orm, id, {}, beforeCommit);
}

/** The rail refused a return made outside any provider: UNMATCHED again, in the suspense, with the reason. */
export async function failReturn(s: Pick<ServiceContext, 'orm'>, id: string, failure: string) {
  return failRailReturn(s.orm, id, failure);
}

/**
 * `cambio payment return`, decided by the payment's rail (docs/decisions/0110). Through its provider (PIX with a
 * PSP): RETURNING, and the return's workflow sends it and settles it when the PSP answers. A return in flight at a
 * provider is shown as it is, whatever this process's configuration: only the provider's final answer completes it.
 * PIX without a PSP: RAIL_NOT_CONFIGURED, unless `outside` (the operator states it went back at the bank, with the
 * bank's reference). Outside, and on a rail with no connector, nothing is sent by Cambio, so the return is started
 * and completed at once, as two commits: a crash between them leaves it RETURNING, in the suspense, and the command
 * run again completes it. `beforeCommit` sees the payment inside each transaction (the first to commit carries the
 * operator's audit row).
 */
export async function returnPayment(
  s: ServiceContext,
  id: string,
  reason: string,
  beforeCommit?: BeforeCommit<InboundPayment>,
  outside?: OutsideReturn,
) {
  const found = await findPayment(systemEm(s.orm), id);
  if (!found) throw notFound('inbound payment');
  if (found.status === 'RETURNING' && found.returnId) {
    if (!outside) return found;
    throw new CambioError(
      'INVALID_STATE',
      `the payment's return ${found.returnId} is in flight at its provider; only the provider's answer settles it`,
      { status: found.status, returnId: found.returnId },
    );
  }
  if (!outside && returnsThroughProvider(s.config, found.rail)) {
    return found.status === 'RETURNING' ? found : startReturn(s, id, reason, beforeCommit);
  }
  if (found.status !== 'RETURNING') await startReturn(s, id, reason, beforeCommit, outside);
  else if (outsideUnlessProvider(found.rail) && !outside) throw railNotConfigured(found.rail);
  else if (outside && found.returnEndToEndId !== outside.reference) {
    throw new CambioError(
      'INVALID_STATE',
      `the payment's return in flight has the reference ${found.returnEndToEndId ?? '(none)'}, ` +
        `not ${outside.reference}`,
      { status: found.status },
    );
  }
  return completeReturn(s, id, beforeCommit);
}

/**
 * CREDITED: a DEPOSIT of `accountId` (the payment's customer's), 1:1 in the payment's asset, COMPLETED at once with
 * its events and report movements, funded from the suspense. The asset must be enabled on the account.
 * `beforeCommit` sees the payment and its deposit inside the transaction (the operator's audit row commits with it).
 */
export async function creditPayment(
  s: ServiceContext,
  id: string,
  accountId: string,
  beforeCommit?: BeforeCommit<CreditedPayment>,
): Promise<CreditedPayment> {
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
        rateSource: 'peg',
        rateSourceTime: null,
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
            type: railTransactionType(payment.rail),
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
    const credited = {
      payment: (await findPayment(tx, id, { withPlatform: true }))!,
      operation,
    };
    beforeCommit?.(credited);
    return credited;
  });
}
