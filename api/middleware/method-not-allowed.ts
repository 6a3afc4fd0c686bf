import type Koa from 'koa';
import type Router from '@koa/router';
import { CambioError } from '../../domain/errors';

/**
 * The last middleware: reached only when no route took the request. A path some route serves with other methods
 * answers 405 METHOD_NOT_ALLOWED with `Allow` (RFC 9110 §15.5.6); a path no route serves falls through to the
 * 404 of requestContext. `routers` are those that could have served this request (its version's and the
 * platform's).
 */
export function methodNotAllowed(routers: (ctx: Koa.Context) => readonly Router[]): Koa.Middleware {
  return async (ctx) => {
    const allowed = new Set<string>();
    for (const router of routers(ctx))
      for (const layer of router.match(ctx.path, ctx.method).path) for (const m of layer.methods) allowed.add(m);
    if (allowed.size === 0) return;
    const allow = [...allowed].sort();
    ctx.set('Allow', allow.join(', '));
    throw new CambioError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}`, { allow });
  };
}
