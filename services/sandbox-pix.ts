// The sandbox's payer for PIX deposits (decision 0078): the sandbox route asks the simulated PSP to pay the deposit's
// charge (its control route `POST /sim/pix`), and Cambio learns of the payment from the PSP's notice, as in production;
// the route then answers with the record that notice made.
import type { Em } from '../db/orm';
import { findOperation } from '../db/repositories/operations';
import { CambioError } from '../domain/errors';
import { Dec, formatAmount, parseAmountValue } from '../domain/money';
import { isTransientStatus } from '../rails/errors';
import { PIX_ASSET, PIX_RAIL } from '../rails/pix/connector';
import { PIX_END_TO_END_ID } from '../rails/pix/notices';
import type { ServiceContext } from './context';
import type { InboundPaymentReport } from './reported-payments';
import { decideOnceRecorded, recordedFor, sandboxUnavailable } from './sandbox-recorded';

// How long the route waits for the simulator's notice to be recorded: the simulator sends it within milliseconds
// and retries from 200 ms on; past this the client's retry (same key, same endToEndId) finds it.
const NOTICE_WAIT_MS = 10_000;
const POLL_MS = 25;
const NOT_YET = "the simulated PSP's notice has not been recorded yet";
const RAIL = PIX_RAIL;
// The most a Pix carries: API Pix's `valor` is `\d{1,10}\.\d{2}`.
const PIX_MAX_VALOR = new Dec('9999999999.99');

export interface SimulatedPix {
  txid: string;
  valor: string;
  endToEndId: string;
}

/**
 * The deposit's charge when the sandbox pays it through the simulated PSP: a PIX deposit that has one (created
 * while a PSP was configured), paid in BRL (the only asset a Pix carries). Undefined: the route records the
 * payment itself, as for the other rails.
 */
export async function simulatedCharge(
  s: ServiceContext,
  em: Em,
  operationId: string,
  body: InboundPaymentReport,
): Promise<string | undefined> {
  if (!s.rails?.connector(RAIL) || !s.config.pix.pspUrl || body.amount.asset !== PIX_ASSET) return undefined;
  const op = await findOperation(em, operationId);
  if (!op || op.type !== 'DEPOSIT') return undefined;
  const txid = (op.intent.fundingInstruction as { txid?: unknown } | undefined)?.txid;
  return typeof txid === 'string' ? txid : undefined;
}

/**
 * The Pix the simulator is to pay, checked as a reported payment is (amount, precision) and as a Pix is (at most
 * 9999999999.99, an end-to-end id in the SPI's format): what no Pix can carry is the request's error, stored with its
 * key, not a PSP refusal or a notice Cambio refuses (decision 0107).
 */
export function simulatedPix(txid: string, body: InboundPaymentReport, endToEndId: string): SimulatedPix {
  const amount = parseAmountValue(body.amount.value, 'BRL', { path: '/amount/value' });
  if (amount.gt(PIX_MAX_VALOR)) {
    const message = `/amount/value is more than a Pix carries (${PIX_MAX_VALOR.toFixed(2)} BRL)`;
    throw new CambioError('INVALID_AMOUNT', message, { path: '/amount/value' });
  }
  if (body.endToEndId !== undefined && !PIX_END_TO_END_ID.test(body.endToEndId)) {
    const message = 'a Pix endToEndId is 32 characters: E, 8 digits, 12 digits and 11 of [a-zA-Z0-9]';
    throw new CambioError('VALIDATION_ERROR', `/endToEndId: ${message}`, {
      errors: [{ path: '/endToEndId', message }],
    });
  }
  return { txid, valor: formatAmount(amount, 'BRL'), endToEndId: body.endToEndId ?? endToEndId };
}

/**
 * Has the simulator pay (an end-to-end id it already received is the same payment: a retry), waits for the
 * notice's record and, when it is this customer's, has it decided. Idempotent by the end-to-end id.
 */
export async function payThroughSimulator(s: ServiceContext, customerId: string, pix: SimulatedPix): Promise<void> {
  const res = await fetch(`${s.config.pix.pspUrl!.replace(/\/+$/, '')}/sim/pix`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(pix),
    signal: AbortSignal.timeout(NOTICE_WAIT_MS),
  }).catch((err: unknown) => {
    throw unavailable(`the simulated PSP is unreachable (${(err as Error).message})`);
  });
  const answer = await res.text();
  if (res.status !== 201 && res.status !== 202 && res.status !== 409) {
    // A refusal is the same on every retry; a timeout, a throttle or a 5xx may pass.
    if (res.status >= 400 && !isTransientStatus(res.status))
      throw new CambioError('RAIL_REJECTED', `the simulated PSP refused the payment: ${answer.slice(0, 200)}`, {
        rail: RAIL,
      });
    throw unavailable(`the simulated PSP answered ${res.status}: ${answer.slice(0, 200)}`);
  }
  await decideOnceRecorded(s, customerId, RAIL, pix.endToEndId, {
    waitMs: NOTICE_WAIT_MS,
    lookEveryMs: POLL_MS,
    notYet: NOT_YET,
  });
}

/** The record the notice made, as its customer sees it; another customer's reference is 409, nothing said of it. */
export const simulatedPayment = (em: Em, customerId: string, endToEndId: string) =>
  recordedFor(em, customerId, RAIL, endToEndId, NOT_YET);

const unavailable = sandboxUnavailable;
