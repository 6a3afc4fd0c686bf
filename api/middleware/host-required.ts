import type Koa from 'koa';
import { CambioError } from '../../domain/errors';

/**
 * An HTTP/1.1 request without a Host header is 400 (RFC 9112 3.2). Node would answer it itself, with a bare status
 * line and no body, before the app sees it; the server lets it through (api/overload/http-server.ts) and this
 * answers it as every other refusal is answered: the error shape, a request id, the version.
 */
export const requireHost: Koa.Middleware = (ctx, next) => {
  const { httpVersionMajor, httpVersionMinor, headers } = ctx.req;
  if (httpVersionMajor === 1 && httpVersionMinor >= 1 && headers.host === undefined) {
    throw new CambioError('MALFORMED_REQUEST', 'an HTTP/1.1 request must carry a Host header');
  }
  // Not async: one promise fewer per request on every route.
  return next();
};
