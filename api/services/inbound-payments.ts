import type { Em } from '../../db/orm';
import type { InboundPayment } from '../../db/entities';
import { findPayment, INBOUND_PAYMENT_LIST } from '../../db/repositories/inbound-payments';
import type { AssetCode } from '../../domain/assets';
import { CambioError } from '../../domain/errors';
import { parseAmountValue } from '../../domain/money';
import { decideInboundPayment, recordInboundPayment as record } from '../../payments/inbound-payments';
import { crashPoint } from '../middleware/crash-point';
import { notFound } from '../errors';
import { ListQuery, runList } from '../../lists/run-list';
import { presentInboundPayment } from '../presenters/inbound-payment';
import type { ServiceContext } from './context';

export interface InboundPaymentReport {
  amount: { value: string; asset: AssetCode };
  endToEndId?: string;
}

/**
 * Step 1 of a payment reported for a deposit (payments/inbound-payments.ts). Keyed by the rail reference: a report
 * of an `endToEndId` already recorded returns that record. Without one, `defaultEndToEndId` names it (the sandbox
 * route derives it from the idempotency key, so a retried request finds its first attempt's record); with neither,
 * it is refused: a reference made up here would make a rerun record the money twice.
 */
export async function recordInboundPayment(
  em: Em,
  operationId: string,
  body: InboundPaymentReport,
  opts: { defaultEndToEndId?: string } = {},
): Promise<InboundPayment> {
  const amount = parseAmountValue(body.amount.value, body.amount.asset, { path: '/amount/value' });
  const endToEndId = body.endToEndId ?? opts.defaultEndToEndId;
  if (!endToEndId) {
    const errors = [{ path: '/endToEndId', message: 'the rail reference of the payment is required' }];
    throw new CambioError('VALIDATION_ERROR', 'the rail reference (endToEndId) is required', { errors });
  }
  return record(em, { operationId, endToEndId, amount, asset: body.amount.asset });
}

/** Both steps, then the record as decided: the operator CLI's `deposit pay`. */
export async function reportInboundPayment(s: ServiceContext, em: Em, operationId: string, body: InboundPaymentReport) {
  const payment = await recordInboundPayment(em, operationId, body);
  // The crash tests kill the process here: recorded, not decided (the rerun or the sweep decides it).
  crashPoint('after-payment-record');
  await decideInboundPayment(s, payment);
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
