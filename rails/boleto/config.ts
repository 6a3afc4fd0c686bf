// BOLETO's settings (BOLETO_*), read here for config/index.ts (`config.boleto`); docs/configuration.md lists them.
import { instant, int, sandboxOnly } from '../../config/env-values';
import type { RailSettings } from '../../config/rail-settings';

/** The bank whose collection API (Inter's Cobrança v3 shape) registers this deployment's boletos. */
export interface BoletoConfig {
  /** BOLETO_BANK_URL; unset: no boleto connector (sandbox: operators or the sandbox route record payments). */
  bankUrl: string | undefined;
  clientId: string;
  clientSecret: string;
  certFile: string | undefined;
  keyFile: string | undefined;
  caFile: string | undefined;
  webhookToken: string;
  /** The payer's address when the account owner's is not a Brazilian one the bank takes. */
  payerAddress: { endereco: string; cidade: string; uf: string; cep: string };
  timeoutMs: number;
  /** Bound of the registration the deposit POST waits for, and of a notice's read-back. */
  chargeTimeoutMs: number;
  reconcileEverySeconds: number;
  reconcileFrom: Date | undefined;
}

export function readBoletoConfig(env: NodeJS.ProcessEnv): BoletoConfig {
  return {
    // In sandbox mode only, BOLETO_SANDBOX_BANK_URL (compose's simulated bank) stands in.
    bankUrl: env.BOLETO_BANK_URL || sandboxOnly(env, env.BOLETO_SANDBOX_BANK_URL),
    clientId: env.BOLETO_CLIENT_ID || 'cambio',
    clientSecret: env.BOLETO_CLIENT_SECRET || 'cambio-dev-boleto-secret',
    certFile: env.BOLETO_CERT_FILE || undefined,
    keyFile: env.BOLETO_KEY_FILE || undefined,
    caFile: env.BOLETO_CA_FILE || undefined,
    // The notice URL's only secret: set a long random value in production.
    webhookToken: env.BOLETO_WEBHOOK_TOKEN || 'cambio-dev-boleto-webhook-token',
    payerAddress: {
      endereco: env.BOLETO_PAYER_ADDRESS || 'Avenida Paulista 1000',
      cidade: env.BOLETO_PAYER_CITY || 'Sao Paulo',
      uf: env.BOLETO_PAYER_UF || 'SP',
      cep: env.BOLETO_PAYER_CEP || '01310100',
    },
    timeoutMs: int(env.BOLETO_TIMEOUT_MS, 10_000, 'BOLETO_TIMEOUT_MS'),
    // Registration is two calls (create, then read the codes): a little more than a PIX charge's one.
    chargeTimeoutMs: int(env.BOLETO_CHARGE_TIMEOUT_MS, 5_000, 'BOLETO_CHARGE_TIMEOUT_MS'),
    reconcileEverySeconds: int(env.BOLETO_RECONCILE_EVERY_SECONDS, 300, 'BOLETO_RECONCILE_EVERY_SECONDS'),
    reconcileFrom: instant(env.BOLETO_RECONCILE_FROM, 'BOLETO_RECONCILE_FROM'),
  };
}

export const boletoSettings: RailSettings<BoletoConfig> = {
  read: readBoletoConfig,
  sandboxOnlyValues: ['cambio-dev-boleto-secret', 'cambio-dev-boleto-webhook-token'],
  // With a bank: its client secret and the notice URL's token.
  secrets: (env) => (env.BOLETO_BANK_URL ? ['BOLETO_CLIENT_SECRET', 'BOLETO_WEBHOOK_TOKEN'] : []),
};
