// The sandbox's payer for BOLETO deposits registered at the simulated bank: the sandbox route has the bank's control
// route (`POST /sim/boleto/pay`) pay the deposit's boleto, and Cambio learns of it the production way (the bank's
// notice, read back); the route answers with the record that notice made (as sandbox-pix.ts does for PIX).
import type { Em } from '../db/orm';
import { findOperation } from '../db/repositories/operations';
import { CambioError } from '../domain/errors';
import { formatAmount, parseAmountValue } from '../domain/money';
import { BOLETO_RAIL } from '../rails/boleto/connector';
import { isTransientStatus } from '../rails/errors';
import type { ServiceContext } from './context';
import type { InboundPaymentReport } from './reported-payments';
import { decideOnceRecorded, recordedFor, sandboxUnavailable } from './sandbox-recorded';

const RAIL = BOLETO_RAIL;
const NOTICE_WAIT_MS = 10_000;
const POLL_MS = 25;
const NOT_YET = "the simulated bank's notice has not been recorded yet";

export interface SimulatedBoleto {
  seuNumero: string;
  /** The bank's id of the boleto: the payment's rail reference. */
  codigoSolicitacao: string;
  valor: string;
}

const bankUrl = (s: ServiceContext) => s.config.boleto.bankUrl!.replace(/\/+$/, '');

async function bankCall(s: ServiceContext, method: string, path: string, body?: unknown) {
  const res = await fetch(`${bankUrl(s)}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(NOTICE_WAIT_MS),
  }).catch((err: unknown) => {
    throw unavailable(`the simulated bank is unreachable (${(err as Error).message})`);
  });
  const text = await res.text();
  if (res.status >= 300) {
    if (res.status >= 400 && !isTransientStatus(res.status))
      throw new CambioError('RAIL_REJECTED', `the simulated bank refused: ${text.slice(0, 200)}`, { rail: RAIL });
    throw unavailable(`the simulated bank answered ${res.status}: ${text.slice(0, 200)}`);
  }
  return JSON.parse(text) as { cobranca: { codigoSolicitacao: string } };
}

/**
 * The deposit's boleto when the sandbox pays it at the simulated bank: a BOLETO deposit registered while a bank was
 * configured, paid in BRL. Undefined: the route records the payment itself, as for the rails without a provider.
 */
export async function simulatedBoleto(
  s: ServiceContext,
  em: Em,
  operationId: string,
  body: InboundPaymentReport,
): Promise<SimulatedBoleto | undefined> {
  if (!s.rails?.connector(RAIL) || !s.config.boleto.bankUrl || body.amount.asset !== 'BRL') return undefined;
  const op = await findOperation(em, operationId);
  if (!op || op.type !== 'DEPOSIT') return undefined;
  const seuNumero = (op.intent.fundingInstruction as { seuNumero?: unknown } | undefined)?.seuNumero;
  if (typeof seuNumero !== 'string') return undefined;
  const amount = parseAmountValue(body.amount.value, 'BRL', { path: '/amount/value' });
  const record = await bankCall(s, 'GET', `/sim/boleto/boletos/${encodeURIComponent(seuNumero)}`);
  return { seuNumero, codigoSolicitacao: record.cobranca.codigoSolicitacao, valor: formatAmount(amount, 'BRL') };
}

/** Has the simulated bank pay the boleto (a boleto paid already is that payment), waits for the notice's record. */
export async function payBoletoThroughSimulator(s: ServiceContext, customerId: string, b: SimulatedBoleto) {
  await bankCall(s, 'POST', '/sim/boleto/pay', { seuNumero: b.seuNumero, valor: b.valor });
  await decideOnceRecorded(s, customerId, RAIL, b.codigoSolicitacao, {
    waitMs: NOTICE_WAIT_MS,
    lookEveryMs: POLL_MS,
    notYet: NOT_YET,
  });
}

/** The record the notice made, as its customer sees it. */
export const simulatedBoletoPayment = (em: Em, customerId: string, codigoSolicitacao: string) =>
  recordedFor(em, customerId, RAIL, codigoSolicitacao, NOT_YET);

const unavailable = sandboxUnavailable;
