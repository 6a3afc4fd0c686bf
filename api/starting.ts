import Koa from 'koa';
import type { Logger } from 'pino';
import { SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS } from '../services/errors';
import { CambioError } from '../domain/errors';
import { requestContext } from './middleware/request-context';
import { closeIfBodyUnread } from './overload/unread-body';

/**
 * What the API answers while it starts and Postgres cannot be reached yet (api/main.ts keeps trying): liveness 200,
 * readiness 503, every other request 503 `SERVICE_UNAVAILABLE` with `Retry-After`, as a running API answers when
 * Postgres goes down under it. Nothing is read or stored, so a client retries with the same idempotency key.
 */
export function startingApp(log: Logger): Koa {
  const app = new Koa();
  const unavailable = new CambioError('SERVICE_UNAVAILABLE', 'the API is starting and cannot reach its database yet', {
    retryAfterSeconds: SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS,
  });
  // The API's own first two layers (api/app.ts): request ids and the error's rendering with its Retry-After, and a
  // body never read closes its connection after the answer.
  app.use(requestContext(log));
  app.use(closeIfBodyUnread);
  app.use((ctx) => {
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    if (ctx.path !== '/readyz') throw unavailable;
    ctx.status = 503;
    ctx.set('Retry-After', String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS));
    ctx.body = { status: 'starting', checks: { postgres: 'unavailable' } };
  });
  return app;
}
