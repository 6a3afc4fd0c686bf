// BOLETO: a registered "bolepix" at a bank speaking Inter's Cobrança v3 (BOLETO_BANK_URL), with notices, listing and
// cancelling; without a bank, an operator records what the bank statement shows (`cambio payment record --rail
// BOLETO`), and outside sandbox a BOLETO deposit is RAIL_NOT_CONFIGURED. README.md lists this folder's files.
import type { Config } from '../../config';
import type { RailEntry } from '../rail';
import { sandboxDigits } from '../sandbox-digits';
import { BoletoClient } from './client';
import { barcodeOf, BARCODE_MAX_AMOUNT } from './codes';
import { boletoDueDate } from './due-date';
import { BOLETO_ASSET, BOLETO_RAIL, BoletoRail } from './connector';
import { BoletoSandboxPayer } from './sandbox-payer';

export { BoletoClient } from './client';
export { BoletoRail } from './connector';

/** The BOLETO rail of this deployment, or undefined when no bank is configured (BOLETO_BANK_URL unset). */
export function boletoRailFromConfig(config: Config): BoletoRail | undefined {
  const boleto = config.boleto;
  if (!boleto.bankUrl) return undefined;
  const client = new BoletoClient({
    baseUrl: boleto.bankUrl.replace(/\/+$/, ''),
    clientId: boleto.clientId,
    clientSecret: boleto.clientSecret,
    certFile: boleto.certFile,
    keyFile: boleto.keyFile,
    caFile: boleto.caFile,
    timeoutMs: boleto.timeoutMs,
  });
  return new BoletoRail(client, {
    webhookToken: boleto.webhookToken,
    payerAddress: boleto.payerAddress,
    ...(config.sandbox ? { sandbox: new BoletoSandboxPayer(boleto.bankUrl) } : {}),
  });
}

// A boleto paid by its barcode shows at the bank only once the compensation has run, a business day after the payer
// paid (the next one, for a payment after the cut-off), dated by the payer's day. A Saturday before Carnival is
// processed on the Thursday: five days; seven leave room for a bank that is a day late. Each run lists those days of
// paid boletos again (decision 0185).
const BOLETO_SETTLEMENT_LAG_MS = 7 * 86_400_000;

const digits = (n: number, description: string) => ({ type: 'string', pattern: `^\\d{${n}}$`, description });

export const boletoRail: RailEntry = {
  rail: BOLETO_RAIL,
  slug: 'boleto',
  assets: [BOLETO_ASSET],
  transactionType: BOLETO_RAIL,
  recordedBy: 'connector',
  operatorWithoutProvider: true,
  // Inter's collection API returns nothing: a boleto paid into the suspense goes back by a transfer at the bank.
  returnedBy: 'operator',
  chargeField: 'seuNumero',
  // A boleto stays payable past the deposit's window (until its due date, and late after): cancelled at the bank.
  cancelsUnpaidCharges: true,
  providerSetting: 'BOLETO_BANK_URL',
  // Inter POSTs to the registered URL itself; a read-back is bounded as the registration is.
  notices: {
    suffix: '',
    timeoutMs: (config) => config.boleto.chargeTimeoutMs,
    token: (config) => config.boleto.webhookToken,
  },
  instruction: {
    summary:
      'BOLETO registered at the bank: the 44-digit `barcode`, the 47-digit `digitableLine`, `dueDate`, ' +
      '`pixCopiaECola` (the bolepix QR) and `seuNumero` (our reference of the boleto)',
    properties: {
      barcode: digits(
        44,
        "BOLETO: the FEBRABAN barcode; its check digit, amount and due-date factor are the deposit's",
      ),
      digitableLine: digits(47, "BOLETO: the 'linha digitável' a payer types; its three field check digits checked"),
      dueDate: { type: 'string', format: 'date', description: 'BOLETO: the last day it is paid at face value' },
      pixCopiaECola: { type: 'string', description: 'BOLETO: the Pix BR Code printed on the bolepix' },
      seuNumero: {
        type: 'string',
        pattern: '^[0-9A-Z]{1,15}$',
        description: 'BOLETO: our id of the boleto at the bank; the same for a retry with the same X-Idempotency-Key',
      },
    },
  },
  // Without a bank (sandbox): a deterministic stand-in that no bank takes; an operator or the sandbox route pays it.
  // Its due date as a bank's boleto has it: a business day in Brasília (decision 0125), not the window's UTC day.
  // A barcode's amount field: a deposit above it is refused before any charge (services/operations/deposit.ts).
  maxAmount: BARCODE_MAX_AMOUNT,
  // Its barcode has a bank's 44 digits: check digit, due-date factor, the deposit's amount, a free field of the
  // operation's.
  fundingInstruction: (operationId, _asset, windowEnd, deposit) => {
    const dueDate = boletoDueDate(new Date(), windowEnd);
    const amount = deposit?.amount ?? '0.00';
    return {
      rail: BOLETO_RAIL,
      barcode: barcodeOf('237', dueDate, amount, sandboxDigits(`${operationId}:boleto`, 25)),
      dueDate,
    };
  },
  hasProvider: (config) => !!config.boleto.bankUrl,
  reconciliation: {
    everySeconds: (config) => config.boleto.reconcileEverySeconds,
    from: (config) => config.boleto.reconcileFrom,
    lookbackMs: BOLETO_SETTLEMENT_LAG_MS,
    note: (config) =>
      'Records boletos paid that no notice brought, over GET /cobranca/v3/cobrancas?situacao=RECEBIDO ' +
      `(BOLETO_RECONCILE_EVERY_SECONDS=${config.boleto.reconcileEverySeconds})`,
  },
  connector: boletoRailFromConfig,
};
