// Every rail's settings module, for config/: config/index.ts reads each into `config.<key>`, and config/production.ts
// gathers each one's secrets and published values. A new rail adds its line here, beside its entry in registry.ts
// (a list apart: the registry's entries are made from a Config, which these settings are part of).
import type { RailSettings } from '../config/rail-settings';
import { boletoSettings } from './boleto/config';
import { cryptoSettings } from './crypto/config';
import { pixSettings } from './pix/config';
import { tedSettings } from './ted/config';

export const RAIL_SETTINGS = {
  pix: pixSettings,
  boleto: boletoSettings,
  ted: tedSettings,
  crypto: cryptoSettings,
} as const;

/** Each rail's part of Config, by its key: `config.pix` is a PixConfig. */
export type RailConfigs = { [K in keyof typeof RAIL_SETTINGS]: ReturnType<(typeof RAIL_SETTINGS)[K]['read']> };

const ALL: readonly RailSettings<unknown>[] = Object.values(RAIL_SETTINGS);

export function readRailConfigs(env: NodeJS.ProcessEnv): RailConfigs {
  return Object.fromEntries(Object.entries(RAIL_SETTINGS).map(([key, s]) => [key, s.read(env)])) as RailConfigs;
}

/** Every rail's published secret values, in the list's order. */
export const railSandboxOnlyValues = (): string[] => ALL.flatMap((s) => s.sandboxOnlyValues);

/** Every rail's secret variables this environment must set outside sandbox mode, in the list's order. */
export const railSecrets = (env: NodeJS.ProcessEnv): string[] => ALL.flatMap((s) => s.secrets(env));
