// The sandbox's payer for TED deposits (decision 0128): the sandbox route books the TED at the simulated bank (its
// control route `POST /sim/bank-accounts/credits`), from the account owner's CNPJ unless the body names another
// payer, and Cambio learns of it the production way: a run of the TED poll (the worker's Schedule, triggered now so
// the answer can carry the record, as PIX's carries the notice's) lists the credit and matches it by payer and
// amount. The route then answers with that record.
import { createHash } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import type { Em } from '../db/orm';
import { findPaymentByReference } from '../db/repositories/inbound-payments';
import { findOperation } from '../db/repositories/operations';
import { CambioError } from '../domain/errors';
import { formatAmount, parseAmountValue } from '../domain/money';
import { isTransientStatus } from '../rails/errors';
import { TED_ASSET, TED_RAIL } from '../rails/ted/connector';
import type { ServiceContext } from './context';
import type { InboundPaymentReport } from './reported-payments';
import { decideOnceRecorded, sandboxUnavailable } from './sandbox-recorded';

// How long the route waits for a poll to record the TED, and how often it asks the Schedule for a run meanwhile (a
// run already going when the TED was booked may have listed before it; the next trigger lists it).
const POLL_WAIT_MS = 15_000;
const TRIGGER_EVERY_MS = 1_500;
const LOOK_EVERY_MS = 50;

export interface SimulatedTed {
  transactionId: string;
  amount: string;
  payerTaxId: string;
}

/**
 * The CNPJ a TED deposit names as its payer, when this deployment reads TEDs from a (simulated) bank and the deposit
 * is on TED; undefined: the route records the payment itself, as for the rails without a provider.
 */
export async function tedDepositWithBank(
  s: ServiceContext,
  em: Em,
  operationId: string,
  body: InboundPaymentReport,
): Promise<string | undefined> {
  if (!s.rails?.connector(TED_RAIL) || !s.config.ted.accountsUrl || body.amount.asset !== TED_ASSET) return undefined;
  const op = await findOperation(em, operationId);
  const instruction = op?.intent.fundingInstruction as { rail?: string; payerTaxId?: string } | undefined;
  if (!op || op.type !== 'DEPOSIT' || instruction?.rail !== TED_RAIL) return undefined;
  return instruction.payerTaxId ?? '';
}

/** The TED to send, checked as a reported payment is; its transactionId from the key, so a retry books the same TED. */
export function simulatedTed(
  body: InboundPaymentReport & { payerTaxId?: string },
  ownerTaxId: string,
  requestScopedId: string,
): SimulatedTed {
  const amount = parseAmountValue(body.amount.value, 'BRL', { path: '/amount/value' });
  if (amount.lte(0)) {
    throw new CambioError('INVALID_AMOUNT', '/amount/value must be above zero', { path: '/amount/value' });
  }
  const fromKey = `TED${createHash('sha256').update(requestScopedId).digest('hex').slice(0, 29).toUpperCase()}`;
  return {
    transactionId: body.endToEndId ?? fromKey,
    amount: formatAmount(amount, 'BRL'),
    payerTaxId: (body.payerTaxId ?? ownerTaxId).replace(/\D/g, ''),
  };
}

/** Books the TED at the simulated bank (idempotent by its transactionId), then has polls run until it is recorded. */
export async function sendThroughSimulatedBank(s: ServiceContext, customerId: string, ted: SimulatedTed) {
  const control = `${new URL(s.config.ted.accountsUrl!).origin}/sim/bank-accounts/credits`;
  const res = await fetch(control, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...ted, accountId: s.config.ted.accountId }),
    signal: AbortSignal.timeout(POLL_WAIT_MS),
  }).catch((err: unknown) => {
    throw unavailable(`the simulated bank is unreachable (${(err as Error).message})`);
  });
  if (res.status !== 200 && res.status !== 201) {
    const answer = (await res.text()).slice(0, 200);
    if (res.status >= 400 && !isTransientStatus(res.status))
      throw new CambioError('RAIL_REJECTED', `the simulated bank refused the TED: ${answer}`, { rail: TED_RAIL });
    throw unavailable(`the simulated bank answered ${res.status}: ${answer}`);
  }
  let triggered = 0;
  await decideOnceRecorded(s, customerId, TED_RAIL, ted.transactionId, {
    waitMs: POLL_WAIT_MS,
    lookEveryMs: LOOK_EVERY_MS,
    notYet: 'the TED poll has not recorded the TED yet',
    async whileWaiting() {
      if (Date.now() - triggered < TRIGGER_EVERY_MS) return;
      triggered = Date.now();
      await triggerPoll(s);
    },
  });
}

/**
 * The record the poll made. The customer booked this TED itself, so the answer shows it even when it is not the
 * customer's (from a CNPJ of nobody's: the platform's suspense), which the customer's reads never list.
 */
export async function simulatedTedPayment(em: Em, transactionId: string) {
  const payment = await findPaymentByReference(em, TED_RAIL, transactionId);
  if (!payment) throw unavailable('the TED poll has not recorded the TED yet');
  return payment;
}

/**
 * One run of the TED poll now, through the worker's Schedule (its id is worker/schedules.ts's `scheduleId`:
 * `{TEMPORAL_TASK_QUEUE}-ted-reconciliation`). A run that overlaps a running one is skipped by the Schedule; the
 * caller triggers again.
 */
async function triggerPoll(s: ServiceContext): Promise<void> {
  try {
    await s.temporal.schedule.getHandle(`${s.config.taskQueue}-ted-reconciliation`).trigger();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) throw unavailable('no worker has created the TED poll yet');
    throw unavailable(`the TED poll could not be triggered (${(err as Error).message})`);
  }
}

const unavailable = sandboxUnavailable;
