import { loadConfig } from '../config';
import { createDeps } from './deps';
import { createApp } from './app';
import { drainServer } from './shutdown';
import { loadSigningKey } from './services/signing-keys';
import { createHttpServer } from './overload/http-server';
import { answerClientErrors } from './client-error';

async function main() {
  const config = loadConfig();
  const deps = await createDeps(config);
  const signingKey = await loadSigningKey(deps.orm);
  let draining = false;
  const app = createApp({ ...deps, signingKey }, { draining: () => draining });
  const server = createHttpServer(app, config).listen(config.port, config.host, () => {
    deps.log.info({ port: config.port }, `Cambio API listening on http://127.0.0.1:${config.port}`);
    // Said at every start, so a deployment running the sandbox by accident shows it in its first lines.
    if (config.sandbox) deps.log.warn({ sandbox: true }, 'sandbox mode ON: customers can approve their own reviews');
    else deps.log.info({ sandbox: false }, 'sandbox mode off');
  });
  answerClientErrors(server, deps.log);

  // Graceful stop: readiness 503 → stop accepting → in-flight requests answered (bounded) → Temporal connection
  // and pool closed → exit 0. Closing the pool under running requests would
  // answer committed work with 500.
  const stop = async (signal: string) => {
    if (draining) return; // npm start's SIGTERM after the terminal's SIGINT is the same request
    draining = true;
    deps.log.info({ signal, graceSeconds: config.shutdownGraceSeconds }, 'stopping API: draining in-flight requests');
    const clean = await drainServer(server, {
      delayMs: config.shutdownDelaySeconds * 1000,
      graceMs: config.shutdownGraceSeconds * 1000,
      log: deps.log,
    });
    await deps.close();
    deps.log.info({ clean }, 'API stopped');
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
}

main().catch((err) => {
  console.error('API failed to start:', err);
  process.exit(1);
});
