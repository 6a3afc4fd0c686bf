import type Koa from 'koa';
import Router from '@koa/router';
import type { Authenticate, RouteTable } from '../routes/define';
import type { ServiceContext } from '../services/context';
import { v1 } from './v1';

/** A version is one module that builds its route table; a new version is a new module, not `if`s. */
export interface ApiVersion {
  name: string;
  routes(services: ServiceContext): RouteTable;
}

export const VERSIONS: Record<string, ApiVersion> = { '1': v1 };
export const DEFAULT_VERSION = '1';

/**
 * Picks the version from `X-Service-Version` (missing, empty or unknown: the default) and echoes the one that
 * serves the request on every response, errors included. Runs before body parsing and routing.
 */
export const selectVersion: Koa.Middleware = async (ctx, next) => {
  const asked = ctx.get('X-Service-Version').trim();
  ctx.state.version = VERSIONS[asked] ? asked : DEFAULT_VERSION;
  ctx.set('X-Service-Version', ctx.state.version);
  await next();
};

/** Routes a request to the route table of the version `selectVersion` chose. */
export function versionDispatcher(
  services: ServiceContext,
  authenticate: Authenticate,
): { middleware: Koa.Middleware; tables: Record<string, RouteTable> } {
  const tables: Record<string, RouteTable> = {};
  const routers: Record<string, Koa.Middleware> = {};
  for (const [name, version] of Object.entries(VERSIONS)) {
    const table = version.routes(services);
    const router = new Router();
    table.mount(router, authenticate);
    tables[name] = table;
    routers[name] = router.routes() as unknown as Koa.Middleware;
  }
  const middleware: Koa.Middleware = (ctx, next) => routers[ctx.state.version](ctx, next);
  return { middleware, tables };
}
