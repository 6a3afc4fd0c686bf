import { loadConfig } from '../config';
import { createDeps } from './deps';
import { createApp } from './app';
import { loadSigningKey } from './services/signing-keys';
import { createHttpServer } from './overload/http-server';

async function main() {
  const config = loadConfig();
  const deps = await createDeps(config);
  const signingKey = await loadSigningKey(deps.orm);
  const app = createApp({ ...deps, signingKey });
  const server = createHttpServer(app, config).listen(config.port, config.host, () => {
    deps.log.info({ port: config.port }, `Cambio API listening on http://127.0.0.1:${config.port}`);
  });
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
