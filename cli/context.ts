import type { Client } from '@temporalio/client';
import { loadConfig } from '../config';
import { CambioError } from '../domain/errors';
import { createDeps } from '../services/deps';
import pino from 'pino';
import type { ServiceContext } from '../services/context';
import { loadSigningKey } from '../services/signing-keys';
import { auditInTransactions } from './audit';

// A Temporal that accepts no connection in this long is down for an operator's command: it says so then, instead of
// after the client's default 10 s (decision 0296). A reachable server, even a busy one, connects in milliseconds.
const TEMPORAL_CONNECT_TIMEOUT_MS = 3_000;

/**
 * The CLI builds the same service context as the API: one code path for operators and customers. Temporal is
 * reached only when a command uses it, so a command that never does (customers, account tags, reports, statements,
 * the books, the audit log, webhook logs, listing, returning or crediting payments) runs while Temporal is down.
 */
export async function withServices<T>(
  fn: (s: ServiceContext) => Promise<T>,
  opts: { temporal?: boolean } = {},
): Promise<T> {
  const config = loadConfig();
  // Logs go to stderr: stdout is the command's answer, which `--json` makes a document a script parses whole.
  const log = pino({ level: 'warn' }, pino.destination(2));
  // Temporal's client and the rails' connectors built on first read: most commands never load them (decision 0295).
  const deps = await createDeps(config, {
    log,
    poolMax: 2,
    applicationName: 'cambio-cli',
    onFirstUse: true,
    temporalConnectTimeoutMs: TEMPORAL_CONNECT_TIMEOUT_MS,
  });
  try {
    if (opts.temporal) await temporalAnswers(deps.temporal, config.temporalAddress);
    const signingKey = await loadSigningKey(deps.orm);
    // From here on, the action's own transaction carries its audit row (not the set-up's reads above).
    auditInTransactions(deps.orm);
    // Assigned, not spread: a spread would read, and so build, the deps' `temporal` and `rails`.
    return await fn(Object.assign(deps, { signingKey }));
  } finally {
    await deps.close();
  }
}

/**
 * `withServices` for a command that signals a workflow (a review's or a withdrawal's decision, a deposit's replay or
 * payment) or manages a schedule: it checks that Temporal answers before it records anything, so while Temporal is
 * down it fails as a whole instead of recording what it cannot deliver now.
 */
export const withTemporalServices = <T>(fn: (s: ServiceContext) => Promise<T>): Promise<T> =>
  withServices(fn, { temporal: true });

async function temporalAnswers(temporal: Client, address: string): Promise<void> {
  try {
    await temporal.connection.ensureConnected();
  } catch (err) {
    const cause = err instanceof Error ? err.message : String(err);
    throw new CambioError(
      'SERVICE_UNAVAILABLE',
      `Temporal at ${address} cannot be reached (${cause}): nothing was done`,
      { temporalAddress: address, recorded: false },
    );
  }
}

/** Prints JSON with --json, else a short human line. */
export function output(json: boolean, value: unknown, human: string): void {
  console.log(json ? JSON.stringify(value, null, 2) : human);
}
