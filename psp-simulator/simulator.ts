import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { problem, readBody, sleep } from './http';
import { token as newToken } from './ids';
import { Store } from './store';
import type { Fault, SimulatorHandle, SimulatorOptions } from './handle';
import { deliverDue, settleDue } from './settlement';
import { pixRoutes } from './routes-pix';
import { payoutRoutes } from './routes-payouts';
import { controlRoutes } from './routes-control';
import type { MountedProvider } from './provider';
import { SIMULATED_PROVIDERS } from './providers';
import { underApi } from './api-pix/layout';

// A PSP that speaks API Pix, for the sandbox and the tests: OAuth2 client credentials, charges, received Pix,
// returns, webhook registration and payouts, with its own durable state (store.ts), notices sent with retries
// (settlement.ts), and control routes under /sim (routes-control.ts) that play the payer and the faults. Beside it,
// in the same process, every other simulated provider of providers.ts (a bank of boletos, a bank's accounts API,
// the exchange-rate sources), each with its own paths, tokens and state.
// The API is served under api-pix/layout.ts's API_BASE, the token, /healthz and the control routes at the origin
// (decision 0256 reads the token there); nothing of the API answers at the root, so a client that drops the base
// path fails here as it would at a PSP laid out as the spec is.

export class Simulator implements SimulatorHandle {
  readonly store: Store;
  readonly tokens = new Map<string, number>();
  tokensIssued = 0;
  faults: Fault[] = [];
  maxListWindowMs?: number;
  private server: Server | undefined;
  private ticker: NodeJS.Timeout | undefined;
  private ticking = false;

  /** The other simulated providers (providers.ts), as they run in this process. */
  private readonly providers: MountedProvider[];

  constructor(readonly options: SimulatorOptions) {
    this.store = new Store(options.stateFile);
    const start = { stateFile: options.stateFile, env: options.env ?? {} };
    this.providers = SIMULATED_PROVIDERS.flatMap((p) => (p.mount ? [p.mount(start)] : []));
  }

  app(): Koa {
    const app = new Koa();
    app.use(async (ctx, next) => {
      try {
        await next();
        // Every answer, reads too, leaves once what it may show is on disk (a write can hold others' changes).
        await this.store.flushed();
      } catch (err) {
        problem(ctx, 500, 'ErroInterno', (err as Error).message);
      }
    });
    app.use(async (ctx, next) => {
      if (ctx.path.startsWith('/sim/')) return next();
      // A fault names the API's path as the client writes it after PIX_PSP_URL (`/cob/`), or the path as it is (a
      // provider's own, OXR's `/api/latest.json` among them).
      const fault = this.takeFault(ctx.method, [ctx.path, underApi(ctx.path)]);
      if (!fault) return next();
      if (fault.afterHandling) {
        await this.withBody(ctx, next);
        await sleep(fault.hangMs ?? 0);
        if (fault.status !== undefined) answer(ctx, fault.status, fault.body);
        return;
      }
      if (fault.hangMs) await sleep(fault.hangMs);
      if (fault.body !== undefined) return answer(ctx, fault.status ?? 503, fault.body);
      problem(ctx, fault.status ?? 503, 'ServicoIndisponivel', 'simulated outage');
      ctx.set('Retry-After', '1');
    });
    app.use((ctx, next) => this.withBody(ctx, next));
    // The other providers' paths (their own OAuth2 and tokens, or none) before the PSP's bearer check.
    for (const provider of this.providers) app.use(provider.middleware);
    app.use(async (ctx, next) => {
      if (ctx.path === '/oauth/token' && ctx.method === 'POST') return this.issueToken(ctx);
      if (ctx.path === '/healthz') return void (ctx.body = { ok: true });
      if (ctx.path.startsWith('/sim/')) return next();
      const path = underApi(ctx.path);
      // The token is beside the API, not in it: under the base it is 404, as at a PSP laid out as the spec is.
      if (path === undefined || path === '/oauth/token') {
        return problem(ctx, 404, 'NaoEncontrado', `${ctx.method} ${ctx.path}`);
      }
      ctx.path = path;
      const bearer = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
      const expires = bearer ? this.tokens.get(bearer) : undefined;
      if (!expires || expires < Date.now()) return problem(ctx, 401, 'AcessoNegado', 'invalid or expired token');
      return next();
    });
    for (const router of [pixRoutes(this), payoutRoutes(this), controlRoutes(this)]) app.use(router.routes());
    app.use((ctx) => problem(ctx, 404, 'NaoEncontrado', `${ctx.method} ${ctx.path}`));
    return app;
  }

  private async withBody(ctx: Koa.Context, next: Koa.Next) {
    if (!ctx.state.bodyRead) {
      ctx.state.bodyRead = true;
      ctx.state.body = await readBody(ctx);
    }
    return next();
  }

  private issueToken(ctx: Koa.Context) {
    const [scheme, encoded] = ctx.get('authorization').split(' ');
    const [id, secret] = Buffer.from(encoded ?? '', 'base64')
      .toString('utf8')
      .split(/:(.*)/s);
    if (scheme !== 'Basic' || !id || this.options.clients[id] === undefined || this.options.clients[id] !== secret) {
      ctx.status = 401;
      ctx.body = { error: 'invalid_client' };
      return;
    }
    const body = ctx.state.body as { grant_type?: string } | undefined;
    if (body?.grant_type !== 'client_credentials') {
      ctx.status = 400;
      ctx.body = { error: 'unsupported_grant_type' };
      return;
    }
    const value = newToken();
    this.tokens.set(value, Date.now() + this.options.tokenTtlSeconds * 1000);
    this.tokensIssued++;
    ctx.body = {
      access_token: value,
      token_type: 'Bearer',
      expires_in: this.options.tokenTtlSeconds,
      scope: 'cob.write cob.read pix.write pix.read webhook.write webhook.read',
    };
  }

  /** The first live fault for the method and any of `paths` (a path and, under the API's base, the path below). */
  private takeFault(method: string, paths: (string | undefined)[]): Fault | undefined {
    const now = Date.now();
    this.faults = this.faults.filter((f) => f.remaining > 0 && f.until > now);
    const prefixed = (prefix: string) => paths.some((path) => path?.startsWith(prefix));
    const fault = this.faults.find(
      (f) => (!f.method || f.method === method) && (!f.pathPrefix || prefixed(f.pathPrefix)),
    );
    if (fault) fault.remaining--;
    return fault;
  }

  /** Settles what is due and sends due notices; one pass at a time. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await settleDue(this);
      await deliverDue(this);
      for (const provider of this.providers) await provider.tick?.();
    } finally {
      this.ticking = false;
    }
  }

  async listen(port: number, host: string): Promise<string> {
    const server = this.app().listen(port, host);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    this.ticker = setInterval(() => void this.tick(), 25);
    const address = server.address() as AddressInfo;
    return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  }

  async close(): Promise<void> {
    if (this.ticker) clearInterval(this.ticker);
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Answers `status` with `body` as given: a string as is ('' is an empty body), anything else as JSON. */
function answer(ctx: Koa.Context, status: number, body: unknown) {
  ctx.remove('Content-Type');
  if (typeof body === 'string') {
    ctx.body = body;
    ctx.type = body ? 'text/plain' : '';
  } else {
    ctx.body = body === undefined ? '' : body;
  }
  ctx.status = status;
}
