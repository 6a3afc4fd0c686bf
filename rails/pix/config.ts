// PIX's settings (PIX_*), read here for config/index.ts (`config.pix`): the rail's folder holds its own
// configuration (docs/configuration.md lists every variable).
import { instant, int, sandboxOnly } from '../../config/env-values';
import type { RailSettings } from '../../config/rail-settings';

/** The PSP that speaks API Pix for this deployment (README, "Going live: connecting a PSP"). */
export interface PixConfig {
  /** PIX_PSP_URL; unset: no PIX rail (sandbox starts the simulated PSP instead). */
  pspUrl: string | undefined;
  clientId: string;
  clientSecret: string;
  /** PIX_TOKEN_URL: the token endpoint, when neither `{PIX_PSP_URL}/oauth/token` nor `/oauth/token` at its origin. */
  tokenUrl: string | undefined;
  /** PIX_SCOPE: scopes asked for with the token, space-separated (a PSP that grants none unasked needs them). */
  scope: string | undefined;
  certFile: string | undefined;
  keyFile: string | undefined;
  caFile: string | undefined;
  receivingKey: string;
  receivingKeyType: string;
  webhookToken: string;
  merchantName: string;
  merchantCity: string;
  /** Bound of one provider call from an activity. */
  timeoutMs: number;
  /** Bound of the charge the deposit POST creates before it answers, and of each read-back of a notice's items. */
  chargeTimeoutMs: number;
  /** The notice route's own rate per client address (decision 0107): sustained per second, and burst. */
  noticeRatePerSecond: number;
  noticeRateBurst: number;
  reconcileEverySeconds: number;
  /** PIX_RECONCILE_FROM: where the deployment's first reconciliation run starts, instead of its first start. */
  reconcileFrom: Date | undefined;
}

export function readPixConfig(env: NodeJS.ProcessEnv): PixConfig {
  return {
    // In sandbox mode only, PIX_SANDBOX_PSP_URL stands in (config/production.ts).
    pspUrl: pixPspUrl(env),
    clientId: env.PIX_CLIENT_ID || 'cambio',
    clientSecret: env.PIX_CLIENT_SECRET || 'cambio-dev-pix-secret',
    tokenUrl: env.PIX_TOKEN_URL || undefined,
    scope: env.PIX_SCOPE?.trim() || undefined,
    certFile: env.PIX_CERT_FILE || undefined,
    keyFile: env.PIX_KEY_FILE || undefined,
    caFile: env.PIX_CA_FILE || undefined,
    receivingKey: env.PIX_RECEIVING_KEY || 'pix@cambio.example.com',
    receivingKeyType: env.PIX_RECEIVING_KEY_TYPE || 'EMAIL',
    // The notice URL's only secret: set a long random value in production.
    webhookToken: env.PIX_WEBHOOK_TOKEN || 'cambio-dev-pix-webhook-token',
    merchantName: env.PIX_MERCHANT_NAME || 'Cambio',
    merchantCity: env.PIX_MERCHANT_CITY || 'Sao Paulo',
    timeoutMs: int(env.PIX_TIMEOUT_MS, 10_000, 'PIX_TIMEOUT_MS'),
    // The deposit POST waits this long for the charge, then answers 503: well inside a client's own timeout.
    chargeTimeoutMs: int(env.PIX_CHARGE_TIMEOUT_MS, 3_000, 'PIX_CHARGE_TIMEOUT_MS'),
    // A PSP posts about one notice per Pix it receives for us, from a few addresses: 50/s sustained and 200 at
    // once is far above one deployment's Pix traffic, and still bounds the read-backs a flood of forged notices
    // could make us send to the PSP (a notice refused 429 is sent again; reconciliation finds what it carried).
    noticeRatePerSecond: Math.max(1, int(env.PIX_NOTICE_RATE_PER_SECOND, 50, 'PIX_NOTICE_RATE_PER_SECOND')),
    noticeRateBurst: Math.max(1, int(env.PIX_NOTICE_RATE_BURST, 200, 'PIX_NOTICE_RATE_BURST')),
    reconcileEverySeconds: int(env.PIX_RECONCILE_EVERY_SECONDS, 300, 'PIX_RECONCILE_EVERY_SECONDS'),
    reconcileFrom: instant(env.PIX_RECONCILE_FROM, 'PIX_RECONCILE_FROM'),
  };
}

/** PIX_PSP_URL, or in sandbox mode only PIX_SANDBOX_PSP_URL (compose's simulated PSP). */
export const pixPspUrl = (env: NodeJS.ProcessEnv): string | undefined =>
  env.PIX_PSP_URL || sandboxOnly(env, env.PIX_SANDBOX_PSP_URL);

export const pixSettings: RailSettings<PixConfig> = {
  read: readPixConfig,
  // The defaults above, and the client secret of the benches' simulated PSP.
  sandboxOnlyValues: ['cambio-dev-pix-secret', 'cambio-dev-pix-webhook-token', 'cambio-bench-pix-secret'],
  // The notice token always (the notice route exists without a PSP); the client secret with a PSP.
  secrets: (env) => ['PIX_WEBHOOK_TOKEN', ...(env.PIX_PSP_URL ? ['PIX_CLIENT_SECRET'] : [])],
};
