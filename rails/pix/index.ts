import type { Config } from '../../config';
import type { RailEntry } from '../rail';
import { PixClient } from './client';
import { PIX_ASSET, PIX_RAIL, PixRail } from './connector';
import { PixSandboxPayer } from './sandbox-payer';

export { PixClient } from './client';
export { PixRail } from './connector';

/** The PIX rail of this deployment, or undefined when no PSP is configured (PIX_PSP_URL unset). */
export function pixRailFromConfig(config: Config): PixRail | undefined {
  const pix = config.pix;
  if (!pix.pspUrl) return undefined;
  const client = new PixClient({
    baseUrl: pix.pspUrl.replace(/\/+$/, ''),
    clientId: pix.clientId,
    clientSecret: pix.clientSecret,
    tokenUrl: pix.tokenUrl,
    scope: pix.scope,
    certFile: pix.certFile,
    keyFile: pix.keyFile,
    caFile: pix.caFile,
    timeoutMs: pix.timeoutMs,
  });
  return new PixRail(client, {
    receivingKey: pix.receivingKey,
    receivingKeyType: pix.receivingKeyType,
    webhookToken: pix.webhookToken,
    merchantName: pix.merchantName,
    merchantCity: pix.merchantCity,
    ...(config.sandbox ? { sandbox: new PixSandboxPayer(pix.pspUrl) } : {}),
  });
}

/** PIX: reais through a PSP speaking API Pix (charges, notices, listing, payouts, returns). */
export const pixRail: RailEntry = {
  rail: PIX_RAIL,
  slug: 'pix',
  assets: [PIX_ASSET],
  transactionType: 'PIX',
  recordedBy: 'connector',
  providerSetting: 'PIX_PSP_URL',
  // The PSP POSTs to the registered URL plus `/pix` (API Pix); reading a notice back is bounded as a charge is.
  notices: {
    suffix: '/pix',
    token: (config) => config.pix.webhookToken,
    timeoutMs: (config) => config.pix.chargeTimeoutMs,
  },
  // The PSP refuses a Pix after the cob's expiracao (the deposit window, from the charge's creation, which is before
  // the deposit's workflow starts). One it took just before can reach us only by a retried notice or the next
  // reconciliation run: two runs' worth covers one run that fails.
  // Without a charge (sandbox without a PSP) nothing expires at a provider, and nothing arrives late.
  lateArrivalSeconds: (config, { charged }) => (charged ? 2 * config.pix.reconcileEverySeconds : 0),
  instruction: {
    summary:
      "PIX_KEY through a PSP: the receiving key, the charge's `txid` and `location`, `pixCopiaECola` (the dynamic " +
      'BR Code any bank app pays) and `expiresAt`',
    properties: {
      keyType: { type: 'string', description: 'PIX_KEY: the type of `key` (EMAIL, CPF, CNPJ, PHONE, EVP)' },
      key: { type: 'string', description: 'PIX_KEY: the key the charge is paid to' },
      txid: {
        type: 'string',
        pattern: '^[a-zA-Z0-9]{26,35}$',
        description: 'PIX_KEY: the charge at the PSP; the same for a retry with the same X-Idempotency-Key',
      },
      location: { type: 'string', description: "PIX_KEY: where a payer's app fetches the charge (no scheme)" },
      pixCopiaECola: {
        type: 'string',
        description: 'PIX_KEY: the dynamic BR Code (EMV QRCPS-MPM), "Pix Copia e Cola"',
      },
      expiresAt: {
        type: 'string',
        format: 'date-time',
        // The TED rail shows it too (rails/ted/index.ts): one property, described for both.
        description: 'PIX_KEY: the charge takes no payment after; TED: a TED received after it completes no deposit',
      },
    },
  },
  // Without a PSP's charge (sandbox without one): an EVP (random) key dedicated to this deposit lets
  // reconciliation match the payment to it.
  fundingInstruction: (operationId) => ({ rail: PIX_RAIL, keyType: 'EVP', key: operationId }),
  hasProvider: (config) => !!config.pix.pspUrl,
  reconciliation: {
    everySeconds: (config) => config.pix.reconcileEverySeconds,
    from: (config) => config.pix.reconcileFrom,
    note: (config) =>
      'Records PIX payments no notice brought, over GET /pix ' +
      `(PIX_RECONCILE_EVERY_SECONDS=${config.pix.reconcileEverySeconds})`,
    workflowType: 'pixReconciliationWorkflow',
  },
  connector: pixRailFromConfig,
};
