import pino, { Logger } from 'pino';
import { loadConfig } from '../config';
import { exitOnUnsafeSecrets } from '../config/production';
import { exitOnWrongChain } from '../rails/crypto/start-check';
import { createDeps, Deps } from '../services/deps';
import { createApp } from './app';
import { drainServer } from './shutdown';
import { loadSigningKey } from '../services/signing-keys';
import { recordRailStart } from '../payments/reconciliation';
import { providerRails } from '../rails';
import { createHttpServer } from './overload/http-server';
import { answerClientErrors } from './client-error';
import { dependencyFailure } from '../services/errors';
import { startingApp } from './starting';
import { untilReachable } from '../services/until-reachable';
import type { Config } from '../config';

async function main() {
  exitOnUnsafeSecrets('API');
  const config = loadConfig();
  const log = pino({ level: config.logLevel, base: { service: 'cambio-api' } });
  await exitOnWrongChain('API', config, (m) => log.warn(m));
  // Listening before Postgres answers: until it does, a request gets 503 with Retry-After (api/starting.ts), as from
  // an API whose Postgres went down under it, instead of a refused connection and a restart loop.
  const server = createHttpServer(startingApp(log), config).listen(config.port, config.host, () => {
    log.info({ port: config.port }, `Cambio API listening on http://127.0.0.1:${config.port}`);
    // Said at every start, so a deployment running the sandbox by accident shows it in its first lines.
    if (config.sandbox) log.warn({ sandbox: true }, 'sandbox mode ON: customers can approve their own reviews');
    else log.info({ sandbox: false }, 'sandbox mode off');
  });
  answerClientErrors(server, log);

  // Set once Postgres answers; until then a stop has nothing to close.
  const running: { deps?: Deps } = {};
  let draining = false;
  // Graceful stop: readiness 503 → stop accepting → in-flight requests answered (bounded) → Temporal connection
  // and pool closed → exit 0. Closing the pool under running requests would
  // answer committed work with 500.
  const stop = async (signal: string) => {
    if (draining) return; // npm start's SIGTERM after the terminal's SIGINT is the same request
    draining = true;
    log.info({ signal, graceSeconds: config.shutdownGraceSeconds }, 'stopping API: draining in-flight requests');
    const clean = await drainServer(server, {
      delayMs: config.shutdownDelaySeconds * 1000,
      graceMs: config.shutdownGraceSeconds * 1000,
      log,
    });
    await running.deps?.close();
    log.info({ clean }, 'API stopped');
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      stop(signal).catch((err) => {
        console.error('API shutdown failed:', err);
        process.exit(1);
      });
    });
  }

  const started = await untilPostgresAnswers(config, log, () => draining);
  if (!started) return;
  running.deps = started.deps;
  const app = createApp({ ...started.deps, signingKey: started.signingKey }, { draining: () => draining });
  server.removeAllListeners('request');
  // Koa's callback answers through `res` and handles its own errors; the promise it returns carries nothing.
  // eslint-disable-next-line @typescript-eslint/no-misused-promises
  server.on('request', app.callback());
  log.info('API ready to serve');
}

/**
 * The service context and the signing key, tried again while Postgres cannot be reached. Any other failure
 * (configuration, a database not migrated) ends the start as before. Undefined once stopping.
 */
function untilPostgresAnswers(config: Config, log: Logger, stopping: () => boolean) {
  return untilReachable(
    async () => {
      const deps = await createDeps(config, { log });
      if (deps.ratesWarning) log.warn(deps.ratesWarning);
      try {
        const signingKey = await loadSigningKey(deps.orm);
        // Where this deployment's reconciliation of each rail begins, if this is its first start (decision 0111).
        await recordRailStart(deps.orm, providerRails(config));
        return { deps, signingKey };
      } catch (err) {
        await deps.close().catch(() => undefined);
        throw err;
      }
    },
    {
      log,
      unreachable: (err) => (dependencyFailure(err) ? 'Postgres' : undefined),
      meanwhile: 'answering 503 until it can',
      stopping,
    },
  );
}

main().catch((err) => {
  console.error('API failed to start:', err);
  process.exit(1);
});
