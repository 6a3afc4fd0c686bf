// The sandbox's payer for TED deposits (decisions 0128, 0140): the simulated bank books the TED (its control route
// `POST /sim/bank-accounts/credits`), from the account owner's CNPJ unless the body names another payer, and Cambio
// learns of it the production way: a run of the TED poll lists the credit and matches it by payer and amount.
import { createHash } from 'node:crypto';
import { CambioError } from '../../domain/errors';
import { formatAmount, parseAmountValue } from '../../domain/money';
import { bareTaxId } from '../../domain/tax-id';
import { isTransientStatus, RailUnavailableError } from '../errors';
import type { SandboxPaid, SandboxPayerCapability, SandboxPaymentRequest } from '../rail';
import { TED_ASSET, TED_RAIL } from './connector';

const CALL_TIMEOUT_MS = 15_000;

export interface SandboxTed {
  transactionId: string;
  amount: string;
  payerTaxId: string;
}

export class TedSandboxPayer implements SandboxPayerCapability<SandboxTed> {
  constructor(
    private readonly accountsUrl: string,
    private readonly accountId: string,
  ) {}

  /**
   * The TED to send for a TED deposit, checked as a reported payment is; its transactionId from the request's id, so
   * a retry books the same TED.
   */
  async payment(request: SandboxPaymentRequest): Promise<SandboxTed | undefined> {
    const instruction = request.fundingInstruction as { rail?: string; payerTaxId?: string };
    if (request.asset !== TED_ASSET || instruction.rail !== TED_RAIL) return undefined;
    const amount = parseAmountValue(request.amount, 'BRL', { path: '/amount/value' });
    if (amount.lte(0)) {
      throw new CambioError('INVALID_AMOUNT', '/amount/value must be above zero', { path: '/amount/value' });
    }
    const fromId = `TED${createHash('sha256').update(request.paymentId).digest('hex').slice(0, 29).toUpperCase()}`;
    return {
      transactionId: request.payer.endToEndId ?? fromId,
      amount: formatAmount(amount, 'BRL'),
      payerTaxId: bareTaxId(request.payer.payerTaxId ?? instruction.payerTaxId ?? ''),
    };
  }

  /** Books the TED at the simulated bank (idempotent by its transactionId); the poll records it. */
  async pay(ted: SandboxTed): Promise<SandboxPaid> {
    const control = `${new URL(this.accountsUrl).origin}/sim/bank-accounts/credits`;
    const res = await fetch(control, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...ted, accountId: this.accountId }),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    }).catch((err: unknown) => {
      throw new RailUnavailableError(`the simulated bank is unreachable (${(err as Error).message})`);
    });
    if (res.status !== 200 && res.status !== 201) {
      const answer = (await res.text()).slice(0, 200);
      if (res.status >= 400 && !isTransientStatus(res.status))
        throw new CambioError('RAIL_REJECTED', `the simulated bank refused the TED: ${answer}`, { rail: TED_RAIL });
      throw new RailUnavailableError(`the simulated bank answered ${res.status}: ${answer}`);
    }
    return {
      reference: ted.transactionId,
      learnedBy: 'reconciliation',
      notYet: 'the TED poll has not recorded the TED yet',
      madeByRequest: true,
    };
  }
}
