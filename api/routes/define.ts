import type Koa from 'koa';
import type Router from '@koa/router';
import { AnswerSecrets, answeredBefore, idempotent, requireIdempotencyKey } from '../middleware/idempotency';
import { validateWith } from '../schemas/ajv';
import { refuseUndecodableQuery } from '../middleware/query-encoding';
import { refuseRepeatedQueryParameters } from '../middleware/repeated-names';
import type { ErrorCode } from '../../domain/errors';
import type { StreamSlots } from '../overload/stream-slots';

/** Sets `ctx.state.customerId` and the tenant-scoped `ctx.state.em`, or throws UNAUTHORIZED. */
export type Authenticate = (ctx: Koa.Context) => Promise<void>;

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteSpec {
  method: Method;
  /** Koa path, e.g. `/api/accounts/:accountId`. */
  path: string;
  summary: string;
  tag: string;
  params?: object;
  query?: object;
  body?: object;
  /** Whether a body must be present (POST /review takes none). */
  bodyRequired?: boolean;
  /**
   * The success status and its body's schema (for /openapi.json; api/schemas/responses.ts). `otherMedia`: the
   * media types the route also answers with (chosen by `?format=` or Accept), each with its schema. `headers`: the
   * response headers of its own the route sends on success, each an OpenAPI Header Object.
   */
  response?: {
    status: number;
    schema?: object;
    description?: string;
    otherMedia?: Record<string, object>;
    headers?: Record<string, object>;
  };
  /** Business error codes of this route, beyond those every route of its kind can answer (api/openapi.ts). */
  errors?: ErrorCode[];
  public?: boolean;
  /** The route exists only in sandbox mode (SANDBOX): otherwise it is not mounted nor documented, so 404. */
  sandbox?: boolean;
  /**
   * The handler keeps the idempotency key's guarantee itself, in a single statement, and calls `idempotent` when
   * it cannot (the quote: services/quotes.ts). It finds the key in `ctx.state.idempotencyKey`.
   */
  ownsIdempotency?: boolean;
  /**
   * Runs after the schemas and before the request's transaction, with `ctx.state.idempotencyKey` set: the place for
   * an outside call the handler needs and must not make inside a transaction (the deposit's PIX charge). It must
   * be idempotent by the key: a retry after a crash before COMMIT runs it again.
   */
  prepare?: (ctx: Koa.Context) => Promise<void>;
  /**
   * `prepare` calls a provider (the deposit's charge): a key that already holds an answer is answered before it
   * (replayed, or 422 for another request), from a plain read of the key's row, so a retry or a reused key never
   * calls the provider again (decision 0168).
   */
  prepareCallsProvider?: boolean;
  /**
   * Fields of the answer that carry a secret shown once (a webhook signing secret): stored sealed with the key and
   * opened on a replay (decision 0167). Not for a route that owns its idempotency, which stores its own answer.
   */
  answerSecrets?: AnswerSecrets;
  handler: (ctx: Koa.Context) => Promise<void>;
}

/** Every route of a version, kept so /openapi.json is generated from the same schemas Ajv enforces. */
export class RouteTable {
  readonly routes: RouteSpec[] = [];

  constructor(private readonly mode: { sandbox: boolean }) {}

  add(spec: RouteSpec): void {
    if (spec.answerSecrets && spec.ownsIdempotency)
      throw new Error(`${spec.path}: a route that owns its idempotency seals its answer's secrets itself`);
    if (spec.sandbox && !this.mode.sandbox) return;
    this.routes.push(spec);
  }

  /** `pages`: the process's slots a list's page is presented in, one per row (`readsAPage`). */
  mount(router: Router, authenticate: Authenticate, pages: StreamSlots): void {
    for (const spec of this.routes) router[spec.method](spec.path, compose(spec, authenticate, pages));
  }
}

/**
 * A list's page: a GET whose query names a page size. Up to 100 records read, presented and serialized on the API's
 * one thread, about 5 ms of it for 100 accounts: the process presents a bounded number of rows at once, a page taking
 * one slot per row it may hold, and a freed slot goes to the customer running the fewest (decision 0361), so one
 * customer's pages cannot queue ahead of every other request.
 */
function readsAPage(spec: RouteSpec): boolean {
  const query = spec.query as { properties?: Record<string, unknown> } | undefined;
  return spec.method === 'get' && query?.properties?.limit !== undefined;
}

/**
 * auth → idempotency key present → schemas → (mutating routes) one transaction holding the key's lock, the
 * handler and its stored result. A schema 400 happens before it, so it is never stored as the key's result.
 */
function compose(spec: RouteSpec, authenticate: Authenticate, pages: StreamSlots): Koa.Middleware {
  const page = readsAPage(spec);
  const mutating = spec.method !== 'get' && spec.method !== 'delete';
  return async (ctx) => {
    if (!spec.public) await authenticate(ctx);
    const key = mutating && !spec.public ? requireIdempotencyKey(ctx) : undefined;
    if (spec.params) validateWith('params', spec.params, ctx.params);
    if (spec.query) {
      refuseUndecodableQuery(ctx.querystring);
      const query = { ...ctx.query };
      refuseRepeatedQueryParameters(query);
      validateWith('query', spec.query, query);
      ctx.state.query = query;
    }
    if (spec.body) {
      const body = ctx.request.body === undefined && !spec.bodyRequired ? {} : ctx.request.body;
      validateWith('body', spec.body, body ?? null);
      ctx.request.body = body;
    }
    if (spec.prepare) {
      ctx.state.idempotencyKey = key;
      if (key && spec.prepareCallsProvider && (await answeredBefore(ctx, key, spec.answerSecrets))) return;
      await spec.prepare(ctx);
    }
    if (key && !spec.ownsIdempotency) {
      await idempotent(ctx, key, () => spec.handler(ctx), { log: ctx.state.log, secrets: spec.answerSecrets });
    } else if (page) {
      const release = await pages.take(ctx.state.customerId, (ctx.state.query as { limit: number }).limit);
      try {
        await spec.handler(ctx);
      } finally {
        release();
      }
    } else {
      ctx.state.idempotencyKey = key;
      await spec.handler(ctx);
    }
  };
}
