import { loadConfig } from '../config';
import { createDeps } from './deps';
import { createApp } from './app';
import { loadSigningKey } from './services/signing-keys';
import { answerClientErrors } from './client-error';

async function main() {
  const config = loadConfig();
  const deps = await createDeps(config);
  const signingKey = await loadSigningKey(deps.orm);
  const app = createApp({ ...deps, signingKey });
  const server = app.listen(config.port, '0.0.0.0', () => {
    deps.log.info({ port: config.port }, `Cambio API listening on http://127.0.0.1:${config.port}`);
  });
  answerClientErrors(server, deps.log);
  const stop = async (signal: string) => {
    deps.log.info({ signal }, 'stopping API');
    server.close();
    await deps.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  console.error('API failed to start:', err);
  process.exit(1);
});
