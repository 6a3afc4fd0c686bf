import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type Koa from 'koa';
import { CambioError } from '../../domain/errors';
import { dependencyFailure } from '../../services/errors';
import { errorBody, statusOf } from '../errors';
import { loggablePath } from '../observability/loggable-path';

const INCOMING_ID = /^[A-Za-z0-9._-]{8,128}$/;

/**
 * First middleware: gives every request an id (echoed in X-Request-Id), renders CambioErrors as
 * `{code, message, details}`, and turns anything else into a generic 500 that never leaks a stack.
 */
export function requestContext(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-Id');
    const requestId = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = log;
    ctx.set('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined)
        throw new CambioError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`);
    } catch (thrown) {
      // A dependency that went away (Postgres, Temporal) is a 503 the client retries, not our 500.
      const unavailable = thrown instanceof CambioError ? undefined : dependencyFailure(thrown);
      if (unavailable)
        log.warn(
          { err: thrown, requestId, method: ctx.method, path: loggablePath(ctx.path) },
          'dependency unavailable: answered 503',
        );
      const err = unavailable ?? thrown;
      if (err instanceof CambioError) {
        ctx.status = statusOf(err.code);
        ctx.body = errorBody(err);
        if (
          (err.code === 'RATE_LIMITED' || err.code === 'SERVICE_UNAVAILABLE' || err.code === 'RATES_UNAVAILABLE') &&
          err.details.retryAfterSeconds
        )
          ctx.set('Retry-After', String(err.details.retryAfterSeconds));
      } else {
        log.error({ err, requestId, method: ctx.method, path: loggablePath(ctx.path) }, 'unhandled error');
        ctx.status = 500;
        ctx.body = {
          code: 'INTERNAL_ERROR',
          message: `internal error; when you report it, give its request id ${requestId}`,
          details: { requestId },
        };
      }
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      log.debug({ requestId, method: ctx.method, path: loggablePath(ctx.path), status: ctx.status, ms }, 'request');
    }
  };
}
