import type { Config } from '../../config';
import { PixClient } from './client';
import { PixRail } from './connector';

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
  });
}
