import Koa from 'koa';
import Router from '@koa/router';
import { railStatus } from '../rails';
import { jwks } from '../services/signing-keys';
import { bearerAuth, stillAdmitted } from './middleware/auth';
import { CustomerAccess } from '../services/customer-access';
import { jsonBody, DEFAULT_BODY_LIMIT } from './middleware/json-body';
import { MAX_BODY_VALUES } from './middleware/body-shape';
import { requestContext } from './middleware/request-context';
import { openApiDocument } from './openapi';
import { registerDocs } from './docs';
import { selectVersion, versionDispatcher } from './versions';
import { requireHost } from './middleware/host-required';
import { methodNotAllowed } from './middleware/method-not-allowed';
import { canonicalIds } from './middleware/canonical-ids';
import { authenticateOnce, customerGate, CustomerAdmission } from './overload/customer-limits';
import { closeIfBodyUnread } from './overload/unread-body';
import { largeBodyTurns } from './overload/large-bodies';
import { SLOT_WAIT_MS, StreamSlots } from './overload/stream-slots';
import { httpMetrics, metricsHandler } from './observability/metrics';
import type { ServiceContext } from '../services/context';
import { Readiness } from './readiness';
import { DeploymentRate, rateWindow } from './overload/deployment-rate';
import { isRailNotice, railNoticeGate, railNoticeRoutes } from './rail-notices';
import { TokenBuckets } from './overload/token-bucket';

// Documents carry up to 5 MiB decoded as base64 (4/3 larger) plus the JSON around them.
const DOCUMENT_BODY_LIMIT = 7 * 1024 * 1024 + 64 * 1024;
// Requests nobody authenticated (the token endpoint) carry two short strings.
const PUBLIC_BODY_LIMIT = 8 * 1024;
// canonicalIds has dropped a trailing slash by now (decision 0198).
const isDocumentUpload = (ctx: Koa.Context) =>
  ctx.method === 'POST' && /^\/api\/accounts\/[^/]+\/documents$/.test(ctx.path);
// A PSP's notice carries many payments (its token is checked before the body is read: railNoticeGate).
const bodyLimit = (services: ServiceContext) => (ctx: Koa.Context) =>
  ctx.state.customerId === undefined
    ? isRailNotice(services, ctx)
      ? DEFAULT_BODY_LIMIT
      : PUBLIC_BODY_LIMIT
    : isDocumentUpload(ctx)
      ? DOCUMENT_BODY_LIMIT
      : DEFAULT_BODY_LIMIT;
// A PSP's notice (token checked) may list thousands of payments within its megabyte; a customer's body holds a few
// hundred values at most (decision 0360).
const bodyValues = (services: ServiceContext) => (ctx: Koa.Context) =>
  ctx.state.customerId === undefined && isRailNotice(services, ctx) ? Infinity : MAX_BODY_VALUES;

export interface AppOptions {
  /** True once a graceful shutdown began: readiness answers 503 so load balancers stop sending traffic. */
  draining?: () => boolean;
}

export function createApp(services: ServiceContext, opts: AppOptions = {}): Koa {
  const app = new Koa();
  // X-Forwarded-For is believed only behind a proxy that sets it (TRUST_PROXY): otherwise any client names its
  // own address and the per-address throttles mean nothing.
  app.proxy = services.config.trustProxy;
  // Koa reports a connection that failed under a response (client gone, request timeout) here; not our error.
  app.on('error', (err) => services.log.debug({ err }, 'connection ended before the response'));
  const { config } = services;
  const access = new CustomerAccess(services.orm, config.customerCacheSeconds);
  // The gate authenticates when the headers arrive; a route asks for the customer's standing again once the request
  // had its slot and its body (it may have waited seconds for both), so a disable in between refuses it.
  const authenticateHeaders = authenticateOnce(bearerAuth(config, services.orm, services.signingKey, access));
  const admittedStill = stillAdmitted(access);
  const authenticate = async (ctx: Koa.Context): Promise<void> => {
    await authenticateHeaders(ctx);
    await admittedStill(ctx);
  };
  const { middleware: versioned, tables, routers } = versionDispatcher(services, authenticate);
  // The rate is the deployment's (one counter in Postgres shared by every API process) when the deps carry the
  // store; the in-flight bound protects this process and stays per process.
  const window = rateWindow(config.rateLimitPerSecond, config.rateLimitBurst);
  const deploymentRate =
    services.rateLimits && config.rateLimitScope === 'deployment'
      ? new DeploymentRate(services.rateLimits.limiter(window.points, window.seconds), window.points)
      : undefined;
  const admission = new CustomerAdmission(
    {
      perSecond: config.rateLimitPerSecond,
      burst: config.rateLimitBurst,
      inFlight: config.rateLimitInFlight,
      queue: config.rateLimitQueue,
    },
    Date.now,
    deploymentRate && ((customerId) => deploymentRate.take(customerId)),
  );
  // The KiB of customers' large bodies this process reads and handles at once (decision 0362).
  const bodySlots = new StreamSlots({
    max: config.bodyKibMax,
    perCustomer: config.bodyKibPerCustomer,
    waitMs: SLOT_WAIT_MS,
    label: 'KiB of request bodies',
  });
  // The PSP notice route's own rate per client address (decision 0107), shared by the deployment like the
  // customers' rate when the store is there, else a bucket per address in this process.
  const noticeWindow = rateWindow(config.pix.noticeRatePerSecond, config.pix.noticeRateBurst);
  const noticeRate =
    services.rateLimits && config.rateLimitScope === 'deployment'
      ? new DeploymentRate(
          services.rateLimits.limiter(noticeWindow.points, noticeWindow.seconds, 'rail-notice'),
          noticeWindow.points,
        )
      : undefined;
  const noticeBuckets = new TokenBuckets({
    perSecond: config.pix.noticeRatePerSecond,
    burst: config.pix.noticeRateBurst,
  });
  const takeNotice = (address: string) => (noticeRate ? noticeRate.take(address) : noticeBuckets.take(address));
  const readiness = new Readiness(services, config.readinessCacheMs);
  // By path, whatever the method: a method the public path does not declare gets its 405 without a token.
  const publicPaths = new Set([...tables.values()].flatMap((t) => t.routes.filter((r) => r.public).map((r) => r.path)));

  const platform = new Router();
  platform.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  platform.get('/readyz', async (ctx) => {
    if (opts.draining?.()) {
      ctx.status = 503;
      ctx.body = { status: 'draining', checks: {}, sandbox: config.sandbox };
      return;
    }
    const checks = await readiness.check();
    ctx.status = checks.postgres === 'ok' && checks.temporal === 'ok' ? 200 : 503;
    // Which rails move real money here: a PSP's connector, or operators recording bank statements.
    ctx.body = {
      status: ctx.status === 200 ? 'ready' : 'not ready',
      checks,
      sandbox: config.sandbox,
      rails: railStatus(config),
    };
  });
  platform.get(
    '/metrics',
    metricsHandler(services.orm, {
      token: config.metricsToken,
      stuckPayoutAfterSeconds: config.stuckPayoutAfterSeconds,
    }),
  );
  platform.get('/.well-known/jwks.json', (ctx) => {
    ctx.body = jwks(services.signingKey);
  });
  platform.get('/openapi.json', (ctx) => {
    const here = `${ctx.protocol}://${ctx.host}`;
    const tokenUrl = `${config.authUrl ?? here}/api/oauth/client/token`;
    ctx.body = openApiDocument(tables.get(ctx.state.version)!, ctx.state.version, here, tokenUrl);
  });
  registerDocs(platform);
  // Exactly the path the notice gate checks (case and trailing slash included): no other spelling reaches the
  // handler past the gate's rate limit and token check.
  const notices = new Router({ sensitive: true, strict: true });
  railNoticeRoutes(notices, services);

  app.use(httpMetrics);
  app.use(requestContext(services.log));
  app.use(closeIfBodyUnread);
  app.use(selectVersion);
  app.use(requireHost);
  app.use(canonicalIds);
  // Authentication and the customer's limits come before a byte of the body is read.
  app.use(customerGate(authenticateHeaders, (ctx) => publicPaths.has(ctx.path), admission));
  // The PSP's notices: their own rate and the path's token, before the body is read too.
  app.use(railNoticeGate(services, takeNotice));
  app.use(jsonBody(bodyLimit(services), bodyValues(services), largeBodyTurns(bodySlots)));
  app.use(notices.routes());
  app.use(platform.routes());
  app.use(versioned);
  app.use(methodNotAllowed((ctx) => [notices, platform, routers.get(ctx.state.version)!]));
  return app;
}
