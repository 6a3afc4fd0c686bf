import type { Config } from '../config';
import type { PixRail } from './pix/connector';
import { pixRailFromConfig } from './pix';

/** The connectors this deployment has; a rail left out has no provider (RAIL_NOT_CONFIGURED). */
export interface Rails {
  pix?: PixRail;
}

export function railsFromConfig(config: Config): Rails {
  return { pix: pixRailFromConfig(config) };
}

/** The rails whose provider this process has: a deployment's origin on each is its first start with it. */
export function providerRails(config: Config): string[] {
  return config.pix.pspUrl ? ['PIX_KEY'] : [];
}

/** What /readyz shows per rail: a provider, or operators recording what the bank statement shows. */
export function railStatus(config: Config): Record<string, string> {
  return {
    PIX_KEY: config.pix.pspUrl ? 'psp' : 'not configured',
    BOLETO: 'manual',
    TED: 'manual',
    CRYPTO: 'manual',
  };
}
