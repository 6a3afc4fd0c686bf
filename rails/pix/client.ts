import { readFileSync } from 'node:fs';
import { Agent, fetch, type Dispatcher } from 'undici';
import { isTransientStatus, RailUnavailableError } from '../errors';

// The PSP's HTTP API as the BCB's API Pix defines it: OAuth2 client credentials and, in production, mTLS. This
// module knows the protocol (auth, timeouts, what a failure is) and no business rule; connector.ts translates.

export interface PixClientOptions {
  /** PIX_PSP_URL: the PSP's base URL, without a trailing slash. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** PEM files for mTLS (PIX_CERT_FILE, PIX_KEY_FILE, PIX_CA_FILE); the BCB's security manual requires them. */
  certFile?: string;
  keyFile?: string;
  caFile?: string;
  /** Per request, token fetch included. */
  timeoutMs: number;
}

export interface PixResponse {
  status: number;
  body: unknown;
}

export interface RequestOptions {
  query?: Record<string, string | number>;
  body?: unknown;
  /** Overrides the client's timeout for this call (the deposit POST waits less than an activity). */
  timeoutMs?: number;
}

// A token is used until this long before the expiry the PSP announced, so a request never carries one that
// expires on the way.
const TOKEN_MARGIN_MS = 30_000;

export class PixClient {
  private token: { value: string; expiresAt: number } | undefined;
  private pendingToken: Promise<string> | undefined;
  private readonly dispatcher: Dispatcher;
  /** Tokens fetched since start: the contract suite checks that they are cached. */
  tokensFetched = 0;

  constructor(private readonly options: PixClientOptions) {
    const tls =
      options.certFile && options.keyFile
        ? {
            cert: readFileSync(options.certFile),
            key: readFileSync(options.keyFile),
            ...(options.caFile ? { ca: readFileSync(options.caFile) } : {}),
          }
        : {};
    this.dispatcher = new Agent({ connect: tls, keepAliveTimeout: 10_000 });
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /**
   * One call with a bearer token. A 401 means the PSP no longer takes the cached token (revoked, or its clock
   * ran ahead): fetch a new one and send once more. Answers below 500 are returned for the caller to read;
   * 5xx, 408, 425, 429, a timeout or a refused connection is RailUnavailableError.
   */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<PixResponse> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const first = await this.send(method, path, options, await this.bearer(timeoutMs), timeoutMs);
    if (first.status !== 401) return first;
    this.token = undefined;
    const second = await this.send(method, path, options, await this.bearer(timeoutMs), timeoutMs);
    if (second.status === 401) throw new RailUnavailableError('the PSP refuses our credentials (PIX_CLIENT_ID)', 60);
    return second;
  }

  private async bearer(timeoutMs: number): Promise<string> {
    if (this.token && Date.now() < this.token.expiresAt) return this.token.value;
    // Concurrent callers share one token request.
    this.pendingToken ??= this.fetchToken(timeoutMs).finally(() => (this.pendingToken = undefined));
    return this.pendingToken;
  }

  private async fetchToken(timeoutMs: number): Promise<string> {
    const basic = Buffer.from(`${this.options.clientId}:${this.options.clientSecret}`).toString('base64');
    const res = await this.call(`${this.options.baseUrl}/oauth/token`, timeoutMs, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const body = res.body as { access_token?: unknown; expires_in?: unknown };
    if (res.status !== 200 || typeof body?.access_token !== 'string') {
      throw new RailUnavailableError(`the PSP gave no token (HTTP ${res.status})`, 60);
    }
    this.tokensFetched++;
    const ttlMs = (typeof body.expires_in === 'number' ? body.expires_in : 300) * 1000;
    this.token = { value: body.access_token, expiresAt: Date.now() + Math.max(ttlMs - TOKEN_MARGIN_MS, ttlMs / 2) };
    return body.access_token;
  }

  private send(method: string, path: string, options: RequestOptions, token: string, timeoutMs: number) {
    const url = new URL(`${this.options.baseUrl}${path}`);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, String(v));
    const hasBody = options.body !== undefined;
    return this.call(url.toString(), timeoutMs, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
      ...(hasBody ? { body: JSON.stringify(options.body) } : {}),
    });
  }

  private async call(
    url: string,
    timeoutMs: number,
    init: { method: string; headers: Record<string, string>; body?: string },
  ): Promise<PixResponse> {
    let res;
    let text: string;
    try {
      res = await fetch(url, { ...init, dispatcher: this.dispatcher, signal: AbortSignal.timeout(timeoutMs) });
      text = await res.text();
    } catch (err) {
      throw new RailUnavailableError(`PSP unreachable: ${init.method} ${new URL(url).pathname}: ${describe(err)}`);
    }
    if (isTransientStatus(res.status)) {
      const retryAfter = Number(res.headers.get('retry-after'));
      throw new RailUnavailableError(
        `PSP answered ${res.status} to ${init.method} ${new URL(url).pathname}`,
        Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 5,
      );
    }
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: kept as text for the error message.
    }
    return { status: res.status, body };
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? err.name ?? err.message;
  }
  return String(err);
}
