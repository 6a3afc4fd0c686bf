import type Koa from 'koa';
import Router from '@koa/router';
import type { Authenticate, RouteTable } from '../routes/define';
import type { ServiceContext } from '../../services/context';
import { SLOT_WAIT_MS, StreamSlots } from '../overload/stream-slots';
import { v1 } from './v1';
import type { ApiVersion } from './version';

// A Map, not an object literal: the header is the client's string, and on a plain object `__proto__` or
// `constructor` would find Object.prototype's members instead of "no such version".
export const VERSIONS: ReadonlyMap<string, ApiVersion> = new Map([['1', v1]]);
export const DEFAULT_VERSION = '1';

/** The version `X-Service-Version: asked` is served by: the one of that name, else the default. */
export const versionFor = (asked: string): string => (VERSIONS.has(asked.trim()) ? asked.trim() : DEFAULT_VERSION);

/**
 * Picks the version from `X-Service-Version` (missing, empty or unknown: the default) and echoes the one that
 * serves the request on every response, errors included. Runs before body parsing and routing.
 */
export const selectVersion: Koa.Middleware = async (ctx, next) => {
  ctx.state.version = versionFor(ctx.get('X-Service-Version'));
  ctx.set('X-Service-Version', ctx.state.version);
  await next();
};

export interface VersionedRoutes {
  /** Routes a request to the route table of the version `selectVersion` chose. */
  middleware: Koa.Middleware;
  tables: ReadonlyMap<string, RouteTable>;
  routers: ReadonlyMap<string, Router>;
}

export function versionDispatcher(services: ServiceContext, authenticate: Authenticate): VersionedRoutes {
  const tables = new Map<string, RouteTable>();
  const routers = new Map<string, Router>();
  const middlewares = new Map<string, Koa.Middleware>();
  // The rows of list pages this process presents at once, every version's together (decision 0361).
  const pages = new StreamSlots({
    max: services.config.listRowsMax,
    perCustomer: services.config.listRowsPerCustomer,
    waitMs: SLOT_WAIT_MS,
    label: 'list rows',
  });
  for (const [name, version] of VERSIONS) {
    const table = version.routes(services);
    // Case-sensitive: the customer gate admits by the path's `/api/` prefix, so `/API/...` must not reach a route.
    const router = new Router({ sensitive: true });
    table.mount(router, authenticate, pages);
    tables.set(name, table);
    routers.set(name, router);
    middlewares.set(name, router.routes() as unknown as Koa.Middleware);
  }
  const middleware: Koa.Middleware = (ctx, next) => middlewares.get(ctx.state.version)!(ctx, next);
  return { middleware, tables, routers };
}
