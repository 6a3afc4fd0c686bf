// The sandbox's payer for BOLETO deposits registered at the simulated bank (decision 0140): the bank's control route
// (`POST /sim/boleto/pay`) pays the deposit's boleto, and Cambio learns of it the production way (the bank's notice,
// read back).
import { CambioError } from '../../domain/errors';
import { Dec, formatAmount, parseAmountValue } from '../../domain/money';
import { isTransientStatus, RailUnavailableError } from '../errors';
import type { SandboxPaid, SandboxPayerCapability, SandboxPaymentRequest } from '../rail';
import { BOLETO_ASSET, BOLETO_RAIL } from './connector';

const CALL_TIMEOUT_MS = 10_000;
// The most a boleto's received amount is written with (records.ts: 13 digits before the point): paid for more at the
// simulated bank, its notice is refused and no reconciliation run can record it.
const BOLETO_MAX_VALOR = new Dec('9999999999999.99');

export interface SandboxBoleto {
  seuNumero: string;
  /** The bank's id of the boleto: the payment's rail reference. */
  codigoSolicitacao: string;
  valor: string;
}

export class BoletoSandboxPayer implements SandboxPayerCapability<SandboxBoleto> {
  constructor(private readonly bankUrl: string) {}

  /** The deposit's boleto, as the simulated bank holds it, paid in BRL; a deposit without one is recorded directly. */
  async payment(request: SandboxPaymentRequest): Promise<SandboxBoleto | undefined> {
    const seuNumero = request.fundingInstruction.seuNumero;
    if (request.asset !== BOLETO_ASSET || typeof seuNumero !== 'string') return undefined;
    const amount = parseAmountValue(request.amount, 'BRL', { path: '/amount/value' });
    if (amount.gt(BOLETO_MAX_VALOR)) {
      const message = `/amount/value is more than a boleto carries (${BOLETO_MAX_VALOR.toFixed(2)} BRL)`;
      throw new CambioError('INVALID_AMOUNT', message, { path: '/amount/value' });
    }
    const record = (await this.call('GET', `/sim/boleto/boletos/${encodeURIComponent(seuNumero)}`)) as {
      cobranca: { codigoSolicitacao: string };
    };
    return { seuNumero, codigoSolicitacao: record.cobranca.codigoSolicitacao, valor: formatAmount(amount, 'BRL') };
  }

  /** Has the simulated bank pay the boleto (a boleto paid already is that payment). */
  async pay(b: SandboxBoleto): Promise<SandboxPaid> {
    await this.call('POST', '/sim/boleto/pay', { seuNumero: b.seuNumero, valor: b.valor });
    return {
      reference: b.codigoSolicitacao,
      learnedBy: 'notice',
      notYet: "the simulated bank's notice has not been recorded yet",
    };
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.bankUrl.replace(/\/+$/, '')}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    }).catch((err: unknown) => {
      throw new RailUnavailableError(`the simulated bank is unreachable (${(err as Error).message})`);
    });
    const text = await res.text();
    if (res.status >= 300) {
      if (res.status >= 400 && !isTransientStatus(res.status))
        throw new CambioError('RAIL_REJECTED', `the simulated bank refused: ${text.slice(0, 200)}`, {
          rail: BOLETO_RAIL,
        });
      throw new RailUnavailableError(`the simulated bank answered ${res.status}: ${text.slice(0, 200)}`);
    }
    return JSON.parse(text) as unknown;
  }
}
