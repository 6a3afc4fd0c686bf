import Koa from 'koa';
import { errorBody, SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS } from './errors';
import { CambioError } from '../domain/errors';
import { closeIfBodyUnread } from './overload/unread-body';

/**
 * What the API answers while it starts and Postgres cannot be reached yet (api/main.ts keeps trying): liveness 200,
 * readiness 503, every other request 503 `SERVICE_UNAVAILABLE` with `Retry-After`, as a running API answers when
 * Postgres goes down under it. Nothing is read or stored, so a client retries with the same idempotency key.
 */
export function startingApp(): Koa {
  const app = new Koa();
  const unavailable = new CambioError('SERVICE_UNAVAILABLE', 'the API is starting and cannot reach its database yet', {
    retryAfterSeconds: SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS,
  });
  // A body is never read here: its connection closes after the answer, as the API does (api/overload/unread-body.ts).
  app.use(closeIfBodyUnread);
  app.use((ctx) => {
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return;
    }
    ctx.status = 503;
    ctx.set('Retry-After', String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS));
    ctx.body =
      ctx.path === '/readyz' ? { status: 'starting', checks: { postgres: 'unavailable' } } : errorBody(unavailable);
  });
  return app;
}
