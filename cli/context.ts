import { loadConfig } from '../config';
import { createDeps } from '../api/deps';
import pino from 'pino';
import type { ServiceContext } from '../api/services/context';
import { loadSigningKey } from '../api/services/signing-keys';
import { auditInTransactions } from './audit';

/** The CLI builds the same service context as the API: one code path for operators and customers. */
export async function withServices<T>(fn: (s: ServiceContext) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const deps = await createDeps(config, { log: pino({ level: 'warn' }), poolMax: 2, applicationName: 'cambio-cli' });
  try {
    const signingKey = await loadSigningKey(deps.orm);
    // From here on, the action's own transaction carries its audit row (not the set-up's reads above).
    auditInTransactions(deps.orm);
    return await fn({ ...deps, signingKey });
  } finally {
    await deps.close();
  }
}

/** Prints JSON with --json, else a short human line. */
export function output(json: boolean, value: unknown, human: string): void {
  console.log(json ? JSON.stringify(value, null, 2) : human);
}
