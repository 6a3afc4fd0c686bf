import { randomUUID } from 'node:crypto';
import type { Em } from '../../db/orm';
import { InboundPayment, OperationSchema } from '../../db/entities';
import { findPayment, INBOUND_PAYMENT_LIST, recordPayment } from '../../db/repositories/inbound-payments';
import { inTransaction } from '../../db/transaction';
import type { AssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { parseAmountValue } from '../../domain/money';
import { settleInboundPayment } from '../../payments/inbound-payments';
import { notFound } from '../errors';
import { ListQuery, runList } from '../../lists/run-list';
import { presentInboundPayment } from '../presenters/inbound-payment';
import type { ServiceContext } from './context';

export interface InboundPaymentReport {
  amount: { value: string; asset: AssetCode };
  endToEndId?: string;
}

/**
 * Step 1 of a reported payment: the record, committed before anything decides it (docs/decisions.md, "Inbound
 * payments"). Its own short transaction (a savepoint when the caller holds one). Keyed by the rail reference: a
 * report of an `endToEndId` already recorded returns that record. Without one, `defaultEndToEndId` names it (the
 * API derives it from the idempotency key, so a retried request finds its first attempt's record).
 */
export async function recordInboundPayment(
  em: Em,
  operationId: string,
  body: InboundPaymentReport,
  opts: { defaultEndToEndId?: string } = {},
): Promise<InboundPayment> {
  const op = await em.fork({ keepTransactionContext: true }).findOne(OperationSchema, { id: operationId });
  if (!op) throw notFound('operation');
  if (op.type !== 'DEPOSIT') {
    const message = `operation is ${op.type}; inbound payments are for a DEPOSIT`;
    throw new CambioError('INVALID_STATE', message, { status: op.status, type: op.type });
  }
  const value = parseAmountValue(body.amount.value, body.amount.asset, { path: '/amount/value' });
  const endToEndId = body.endToEndId ?? opts.defaultEndToEndId ?? newEndToEndId();
  const rail = (op.intent.fundingInstruction as { rail: string }).rail;
  const asset = body.amount.asset;
  const { payment } = await inTransaction(em, (tx) =>
    recordPayment(tx, { operationId, accountId: op.accountId, amount: value, asset, rail, endToEndId }),
  );
  return payment;
}

/** Both steps, then the record as decided: the operator CLI's `deposit pay`. */
export async function reportInboundPayment(s: ServiceContext, em: Em, operationId: string, body: InboundPaymentReport) {
  const payment = await recordInboundPayment(em, operationId, body);
  await settleInboundPayment(s, payment);
  return getInboundPayment(em, payment.id);
}

/** One record of the EntityManager's customer; another customer's is 404. */
export async function getInboundPayment(em: Em, id: string) {
  const payment = await findPayment(em.fork({ keepTransactionContext: true }), id);
  if (!payment) throw notFound('inbound payment');
  return presentInboundPayment(payment);
}

export async function listInboundPayments(em: Em, query: ListQuery, cursorSecret: string) {
  const page = await runList(em, INBOUND_PAYMENT_LIST, query, cursorSecret);
  return { data: page.data.map(presentInboundPayment), meta: page.meta };
}

/** A PIX-style end-to-end id for a report that named none: E + 31 random characters. */
export const newEndToEndId = (): string => `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;
