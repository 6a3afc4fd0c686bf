// The generic half of the sandbox inbound-payment route (decision 0140). A deposit whose rail's connector has a
// sandbox payer (rails/rail.ts, SandboxPayerCapability) is paid there, at the simulated provider or on the local
// chain, and Cambio learns of it the production way (a notice, a poll, a chain scan). This file finds the payer,
// has it pay, has the rail's reconciliation Schedule run when nothing notifies Cambio, waits until the payment is
// recorded, decides it for the customer who paid and answers it; 503 with Retry-After while it is not recorded. A
// sandbox payment comes only from the customer's own tax id, and its answer never shows another customer's record
// (decision 0162).
import { ScheduleNotFoundError } from '@temporalio/client';
import type { InboundPayment } from '../db/entities';
import type { Em } from '../db/orm';
import { systemEm } from '../db/orm';
import { ownsAccountOfTaxId } from '../db/repositories/accounts';
import { findPaymentByReference } from '../db/repositories/inbound-payments';
import { findOperation } from '../db/repositories/operations';
import { CambioError, validationError } from '../domain/errors';
import { bareTaxId } from '../domain/tax-id';
import { decideInboundPayment } from '../payments/record-and-decide';
import { RailUnavailableError } from '../rails/errors';
import type { SandboxPaid, SandboxPayerCapability } from '../rails/rail';
import { railEntry } from '../rails/registry';
import type { ServiceContext } from './context';
import { SEND_DEADLINE_MS } from './decisions';
import { getInboundPayment, type InboundPaymentReport } from './reported-payments';

/** The route's answer while the provider's payment has not reached Cambio yet: the client retries with its key. */
export const sandboxUnavailable = (message: string) =>
  new CambioError('SERVICE_UNAVAILABLE', `${message}; retry with the same X-Idempotency-Key`, {
    retryAfterSeconds: 2,
  });

/** What the route waits for after paying, by how Cambio learns of the payment. */
const WAITS = {
  // A simulator sends its notice within milliseconds and retries from 200 ms on; past this the client's retry
  // (same key, same reference) finds it.
  notice: { waitMs: 10_000, lookEveryMs: 25, triggerEveryMs: undefined },
  // A run already going when the payment was made may have read before it: the next trigger reads it.
  reconciliation: { waitMs: 15_000, lookEveryMs: 50, triggerEveryMs: 1_500 },
} as const;

/** A deposit the sandbox pays through its rail's payer, and the rail's payment checked for it. */
export interface SandboxDepositPayment {
  rail: string;
  payer: SandboxPayerCapability;
  /** The payment to make; throws the request's error (kept with its key by the caller). */
  checked(): unknown;
}

const unavailableFrom = (err: unknown): unknown =>
  err instanceof RailUnavailableError ? sandboxUnavailable(err.message) : err;

/**
 * A payer the body names (TED's `payerTaxId`) must own one of the customer's accounts: the simulated bank books what
 * it is told, and a TED from another customer's CNPJ would pay that customer's deposit (decision 0162). Read on the
 * request's tenant-scoped EntityManager, so the refusal is the same whether or not anyone else owns the tax id.
 */
async function requireOwnPayer(em: Em, payerTaxId: string | undefined): Promise<void> {
  if (payerTaxId === undefined || (await ownsAccountOfTaxId(em, bareTaxId(payerTaxId)))) return;
  throw validationError(
    '/payerTaxId',
    "must be the tax id of one of your accounts' owners: a sandbox TED can only come from the customer's own CNPJ",
  );
}

/**
 * The deposit's payment when its rail's connector has a sandbox payer that pays it; undefined: the route records the
 * payment itself, as an operator would (a rail without a provider here, another asset, a deposit without a charge).
 * `paymentId` derives from the idempotency key: a retry pays under the same id.
 */
export async function sandboxDepositPayment(
  s: ServiceContext,
  em: Em,
  operationId: string,
  body: InboundPaymentReport & { payerTaxId?: string },
  paymentId: string,
): Promise<SandboxDepositPayment | undefined> {
  const op = await findOperation(em, operationId);
  if (!op || op.type !== 'DEPOSIT') return undefined;
  const instruction = op.intent.fundingInstruction as Record<string, unknown> | undefined;
  const rail = instruction?.rail;
  const payer = typeof rail === 'string' ? s.rails?.connector(rail)?.sandbox : undefined;
  if (!instruction || typeof rail !== 'string' || !payer) return undefined;
  let payment: unknown;
  let refusal: unknown;
  try {
    await requireOwnPayer(em, body.payerTaxId);
    payment = await payer.payment({
      fundingInstruction: instruction,
      amount: body.amount.value,
      asset: body.amount.asset,
      paymentId,
      payer: { endToEndId: body.endToEndId, payerTaxId: body.payerTaxId },
    });
  } catch (err) {
    // A refusal is the request's answer, kept with its key; an outage is not, the client retries.
    if (!(err instanceof CambioError)) throw unavailableFrom(err);
    refusal = err;
  }
  if (payment === undefined && refusal === undefined) return undefined;
  return {
    rail,
    payer,
    checked() {
      if (refusal !== undefined) throw refusal;
      return payment;
    },
  };
}

/**
 * Has the rail's payer pay (idempotent by the payment's id), has the rail's reconciliation run when nothing notifies
 * Cambio, waits until the payment is recorded and decides it when it is `customerId`'s.
 */
export async function payInSandbox(
  s: ServiceContext,
  customerId: string,
  deposit: SandboxDepositPayment,
  payment: unknown,
): Promise<SandboxPaid> {
  const paid = await deposit.payer.pay(payment).catch((err: unknown) => {
    throw unavailableFrom(err);
  });
  const wait = WAITS[paid.learnedBy];
  let triggered = 0;
  await decideOnceRecorded(s, customerId, deposit.rail, paid.reference, {
    waitMs: wait.waitMs,
    lookEveryMs: wait.lookEveryMs,
    notYet: paid.notYet,
    async whileWaiting() {
      if (wait.triggerEveryMs === undefined || Date.now() - triggered < wait.triggerEveryMs) return;
      triggered = Date.now();
      await triggerReconciliation(s, deposit.rail);
    },
  });
  return paid;
}

/**
 * The record of the payment the payer made, as the route answers it. A payment the request made itself (TED's own
 * transactionId) is shown when it is the customer's, or the platform's from one of the customer's own tax ids (a
 * CNPJ several customers own: its suspense, which the customer's reads never list). Any other record is 409, nothing
 * said of it: another customer's, or one the body's `endToEndId` named that the request did not make (decision 0162).
 */
export async function sandboxPaymentRecord(
  em: Em,
  customerId: string,
  rail: string,
  paid: SandboxPaid,
): Promise<InboundPayment> {
  if (!paid.madeByRequest) return recordedFor(em, customerId, rail, paid.reference, paid.notYet);
  const payment = await findPaymentByReference(em, rail, paid.reference);
  if (!payment) throw sandboxUnavailable(paid.notYet);
  if (payment.customerId === customerId) return payment;
  const payerTaxId = payment.payer?.taxId;
  if (payment.customerId === null && payerTaxId && (await ownsAccountOfTaxId(em, bareTaxId(payerTaxId))))
    return payment;
  throw referenceInUse(rail, paid.reference);
}

/** Another's payment already has this rail reference: whose, and what it is, is not said. */
function referenceInUse(rail: string, reference: string): CambioError {
  const message = `a payment with ${rail} reference ${reference} is already recorded for someone else`;
  return new CambioError('RAIL_REFERENCE_IN_USE', message, { rail, endToEndId: reference });
}

/**
 * One run of the rail's reconciliation now, through the worker's Schedule (its id is worker/schedules.ts's
 * `scheduleId`: `{TEMPORAL_TASK_QUEUE}-{slug}-reconciliation`). A run that overlaps a running one is skipped by the
 * Schedule; the caller triggers again.
 */
async function triggerReconciliation(s: ServiceContext, rail: string): Promise<void> {
  const id = `${s.config.taskQueue}-${railEntry(rail)?.slug ?? rail.toLowerCase()}-reconciliation`;
  try {
    // Bounded as a decision's send is (decision 0215): a Temporal that stalls under the API is this request's 503,
    // not a request that waits on the client's keepalives for minutes (decision 0244).
    await s.temporal.withDeadline(Date.now() + SEND_DEADLINE_MS, () => s.temporal.schedule.getHandle(id).trigger());
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw sandboxUnavailable(`no worker has created the Schedule ${id} yet`);
    throw sandboxUnavailable(`the Schedule ${id} could not be triggered (${(err as Error).message})`);
  }
}

interface RecordWait {
  /** How long to wait for the record before answering 503. */
  waitMs: number;
  /** The pause between two looks. */
  lookEveryMs: number;
  /** What the 503 says is missing. */
  notYet: string;
  /** Run after each look that found nothing (a rail learned of by its poll: have it run now, not at its period). */
  whileWaiting?: () => Promise<void>;
}

/**
 * Waits until `rail`'s payment `reference` is recorded, then decides it when it is `customerId`'s. A transfer seen on
 * a chain but not yet EVM_CONFIRMATIONS deep (PENDING) is not money yet: the wait goes on.
 */
async function decideOnceRecorded(
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
    if (payment && payment.status !== 'PENDING') {
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
async function recordedFor(
  em: Em,
  customerId: string,
  rail: string,
  reference: string,
  notYet: string,
): Promise<InboundPayment> {
  const payment = await findPaymentByReference(em, rail, reference);
  if (!payment) throw sandboxUnavailable(notYet);
  if (payment.customerId !== customerId) throw referenceInUse(rail, reference);
  return getInboundPayment(em, payment.id);
}
