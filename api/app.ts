import Koa from 'koa';
import Router from '@koa/router';
import { jwks } from './services/signing-keys';
import { bearerAuth } from './middleware/auth';
import { customerRateLimiter } from './middleware/rate-limit';
import { jsonBody, DEFAULT_BODY_LIMIT } from './middleware/json-body';
import { requestContext } from './middleware/request-context';
import { openApiDocument } from './openapi';
import { registerDocs } from './docs';
import { selectVersion, versionDispatcher } from './versions';
import type { ServiceContext } from './services/context';

// Documents carry up to 5 MiB decoded as base64 (4/3 larger) plus the JSON around them.
const DOCUMENT_BODY_LIMIT = 7 * 1024 * 1024 + 64 * 1024;
const isDocumentUpload = (ctx: Koa.Context) => ctx.method === 'POST' && /^\/api\/accounts\/[^/]+\/documents$/.test(ctx.path);

export function createApp(services: ServiceContext): Koa {
  const app = new Koa();
  app.proxy = true;
  const limiter = customerRateLimiter({ perSecond: services.config.rateLimitPerSecond, burst: services.config.rateLimitBurst });
  const authenticate = bearerAuth(services.config, services.orm, services.signingKey, limiter);
  const { middleware: versioned, tables } = versionDispatcher(services, authenticate);

  const platform = new Router();
  platform.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  platform.get('/readyz', async (ctx) => {
    const checks = await readiness(services);
    ctx.status = checks.postgres === 'ok' && checks.temporal === 'ok' ? 200 : 503;
    ctx.body = { status: ctx.status === 200 ? 'ready' : 'not ready', checks };
  });
  platform.get('/.well-known/jwks.json', (ctx) => {
    ctx.body = jwks(services.signingKey);
  });
  platform.get('/openapi.json', (ctx) => {
    ctx.body = openApiDocument(tables[ctx.state.version], ctx.state.version, `${ctx.protocol}://${ctx.host}`);
  });
  registerDocs(platform);

  app.use(requestContext(services.log));
  app.use(selectVersion);
  app.use(jsonBody((ctx) => (isDocumentUpload(ctx) ? DOCUMENT_BODY_LIMIT : DEFAULT_BODY_LIMIT)));
  app.use(platform.routes());
  app.use(versioned);
  return app;
}

async function readiness(services: ServiceContext) {
  const withTimeout = <T>(p: Promise<T>) =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000))]);
  const [postgres, temporal] = await Promise.allSettled([
    withTimeout(services.orm.em.fork().getConnection().execute('select 1')),
    withTimeout(services.temporal.connection.workflowService.getSystemInfo({})),
  ]);
  return {
    postgres: postgres.status === 'fulfilled' ? 'ok' : 'unavailable',
    temporal: temporal.status === 'fulfilled' ? 'ok' : 'unavailable',
  };
}
