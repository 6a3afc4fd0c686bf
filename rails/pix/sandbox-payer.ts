// The sandbox's payer for PIX deposits (decisions 0078, 0140): the simulated PSP pays the deposit's charge (its
// control route `POST /sim/pix`), and Cambio learns of the payment from the PSP's notice, as in production.
import { sandboxEndToEndId } from '../../domain/end-to-end-ids';
import { CambioError } from '../../domain/errors';
import { Dec, formatAmount, parseAmountValue } from '../../domain/money';
import { isTransientStatus, RailUnavailableError } from '../errors';
import type { SandboxPaid, SandboxPayerCapability, SandboxPaymentRequest } from '../rail';
import { PIX_ASSET, PIX_RAIL } from './connector';
import { PIX_END_TO_END_ID } from './notices';

// The simulator answers within milliseconds; past this the client's retry (same key, same endToEndId) finds it.
const CALL_TIMEOUT_MS = 10_000;
// The most a Pix carries: API Pix's `valor` is `\d{1,10}\.\d{2}`.
const PIX_MAX_VALOR = new Dec('9999999999.99');

export interface SandboxPix {
  txid: string;
  valor: string;
  endToEndId: string;
}

export class PixSandboxPayer implements SandboxPayerCapability<SandboxPix> {
  constructor(private readonly pspUrl: string) {}

  /**
   * The Pix the simulator is to pay for a deposit that has a charge (created while a PSP was configured), paid in
   * BRL, checked as a reported payment is (amount, precision) and as a Pix is (at most 9999999999.99, an end-to-end
   * id in the SPI's format): what no Pix can carry is the request's error, not a PSP refusal (decision 0107).
   */
  async payment(request: SandboxPaymentRequest): Promise<SandboxPix | undefined> {
    const txid = request.fundingInstruction.txid;
    if (request.asset !== PIX_ASSET || typeof txid !== 'string') return undefined;
    const amount = parseAmountValue(request.amount, 'BRL', { path: '/amount/value' });
    if (amount.gt(PIX_MAX_VALOR)) {
      const message = `/amount/value is more than a Pix carries (${PIX_MAX_VALOR.toFixed(2)} BRL)`;
      throw new CambioError('INVALID_AMOUNT', message, { path: '/amount/value' });
    }
    const { endToEndId } = request.payer;
    if (endToEndId !== undefined && !PIX_END_TO_END_ID.test(endToEndId)) {
      const message = 'a Pix endToEndId is 32 characters: E, 8 digits, 12 digits and 11 of [a-zA-Z0-9]';
      throw new CambioError('VALIDATION_ERROR', `/endToEndId: ${message}`, {
        errors: [{ path: '/endToEndId', message }],
      });
    }
    return { txid, valor: formatAmount(amount, 'BRL'), endToEndId: endToEndId ?? sandboxEndToEndId(request.paymentId) };
  }

  /** Has the simulator pay; an end-to-end id it already received is the same payment (a retry). */
  async pay(pix: SandboxPix): Promise<SandboxPaid> {
    // The simulator's control routes are at its origin, beside the API's base (`/api`) as its token is.
    const res = await fetch(`${new URL(this.pspUrl).origin}/sim/pix`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(pix),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    }).catch((err: unknown) => {
      throw new RailUnavailableError(`the simulated PSP is unreachable (${(err as Error).message})`);
    });
    const answer = await res.text();
    if (res.status !== 201 && res.status !== 202 && res.status !== 409) {
      // A refusal is the same on every retry; a timeout, a throttle or a 5xx may pass.
      if (res.status >= 400 && !isTransientStatus(res.status))
        throw new CambioError('RAIL_REJECTED', `the simulated PSP refused the payment: ${answer.slice(0, 200)}`, {
          rail: PIX_RAIL,
        });
      throw new RailUnavailableError(`the simulated PSP answered ${res.status}: ${answer.slice(0, 200)}`);
    }
    return {
      reference: pix.endToEndId,
      learnedBy: 'notice',
      notYet: "the simulated PSP's notice has not been recorded yet",
    };
  }
}
