// What the sandbox inbound-payment route shares across rails once it has paid at a simulated provider: Cambio learns
// of the payment the production way (a notice, a poll), so the route waits until the record exists, decides it for
// the customer who paid, and answers with it.
import type { InboundPayment } from '../db/entities';
import type { Em } from '../db/orm';
import { systemEm } from '../db/orm';
import { findPaymentByReference } from '../db/repositories/inbound-payments';
import { CambioError } from '../domain/errors';
import { decideInboundPayment } from '../payments/record-and-decide';
import type { ServiceContext } from './context';
import { getInboundPayment } from './reported-payments';

/** The route's answer while the provider's payment has not reached Cambio yet: the client retries with its key. */
export const sandboxUnavailable = (message: string) =>
  new CambioError('SERVICE_UNAVAILABLE', `${message}; retry with the same X-Idempotency-Key`, {
    retryAfterSeconds: 2,
  });

export interface RecordWait {
  /** How long to wait for the record before answering 503. */
  waitMs: number;
  /** The pause between two looks. */
  lookEveryMs: number;
  /** What the 503 says is missing. */
  notYet: string;
  /** Run after each look that found nothing (TED: have the poll run now instead of at its period). */
  whileWaiting?: () => Promise<void>;
}

/** Waits until `rail`'s payment `reference` is recorded, then decides it when it is `customerId`'s. */
export async function decideOnceRecorded(
  s: ServiceContext,
  customerId: string,
  rail: string,
  reference: string,
  wait: RecordWait,
): Promise<void> {
  const em = systemEm(s.orm);
  const deadline = Date.now() + wait.waitMs;
  for (;;) {
    const payment = await findPaymentByReference(em, rail, reference);
    if (payment) {
      if (payment.customerId === customerId)
        await decideInboundPayment(s, payment, undefined, `customer:${customerId}`);
      return;
    }
    if (Date.now() >= deadline) throw sandboxUnavailable(wait.notYet);
    await wait.whileWaiting?.();
    await new Promise((r) => setTimeout(r, wait.lookEveryMs));
  }
}

/**
 * The record of `rail`'s payment `reference`, as `customerId` sees it; another customer's reference is 409, nothing
 * said of it. On `em`, the answer's transaction: a second connection taken while it holds its first deadlocks a pool
 * smaller than the requests in flight. The lookup is by rail reference across customers (plain SQL, no tenant filter).
 */
export async function recordedFor(
  em: Em,
  customerId: string,
  rail: string,
  reference: string,
  notYet: string,
): Promise<InboundPayment> {
  const payment = await findPaymentByReference(em, rail, reference);
  if (!payment) throw sandboxUnavailable(notYet);
  if (payment.customerId !== customerId) {
    const message = `a payment with ${rail} reference ${reference} is already recorded for someone else`;
    throw new CambioError('RAIL_REFERENCE_IN_USE', message, { rail, endToEndId: reference });
  }
  return getInboundPayment(em, payment.id);
}
