import { readFileSync } from 'node:fs';
import { Agent, fetch, type Dispatcher } from 'undici';
import { isTransientStatus, RailUnavailableError } from './errors';

// What the PIX, boleto and TED clients share: one mTLS connection pool, an OAuth2 client-credentials token cached
// until shortly before it expires (concurrent callers share one token request, a 401 fetches a new one once), and
// one reading of an HTTP answer (timeouts, refused connections, 5xx, 408, 425, 429 are RailUnavailableError). Each
// client keeps its own protocol: paths, the token request's shape, and error messages in its provider's words.

/** What an operator sets for a client: its credentials, its mTLS files and its timeout. */
export interface OAuth2ClientSettings {
  clientId: string;
  clientSecret: string;
  /** PEM files for mTLS; without a certificate and a key the pool connects without a client certificate. */
  certFile?: string;
  keyFile?: string;
  caFile?: string;
  /** Per request, token fetch included, unless a request says otherwise. */
  timeoutMs: number;
}

/** How a client's errors word a failure, naming its provider and settings as its operators know them. */
export interface FailureWording {
  /** `where` is `METHOD /path`; `err` is what fetch threw (timeout, refused connection). */
  unreachable: (where: string, err: unknown) => string;
  answered: (status: number, where: string) => string;
  /** The token endpoint answered without a token. */
  noToken: (status: number) => string;
  /** A new token was refused too: the credentials are wrong (names the setting, e.g. PIX_CLIENT_ID). */
  refused: string;
}

/** The provider's side of the token: where and how it is asked for. */
export interface TokenEndpoint {
  /** The token endpoint, whole: each provider has its own path. */
  url: string;
  /**
   * How the id and secret travel: `basic` in an Authorization header (RFC 6749 §2.3.1's preferred way), `form` as
   * client_id and client_secret in the form body (Inter's way).
   */
  credentials: 'basic' | 'form';
  /**
   * Asked when `url` refuses (404, or 401/403/405 from a gateway in front of the API; from then on, once it gives a
   * token): where the provider's standard puts the
   * token when the operator's base URL was not where it lives (API Pix: `/oauth/token` beside `/api/`).
   */
  fallbackUrl?: string;
  /** Scopes asked for, space-separated; none when absent. */
  scope?: string;
  /** The token's life when the provider announces none. */
  defaultTtlSeconds: number;
}

/** A provider's answer below 500 (and not 408, 425, 429): the caller reads it. */
export interface ProviderResponse {
  status: number;
  body: unknown;
}

export interface BearerRequest {
  query?: Record<string, string | number>;
  /** Sent as JSON. */
  body?: unknown;
  /** Headers of the provider's protocol besides the token, made anew for each attempt (a correlation id). */
  headers?: () => Record<string, string>;
  timeoutMs?: number;
}

interface CallInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
}

// A token is used until this long before the expiry the provider announced, so a request never carries one that
// expires on the way (a short-lived token is used for half its life instead).
export const TOKEN_MARGIN_MS = 30_000;

export class OAuth2Session {
  private token: { value: string; expiresAt: number } | undefined;
  private pendingToken: Promise<string> | undefined;
  readonly dispatcher: Dispatcher;
  /** Tokens fetched since start: tests check that they are cached. */
  tokensFetched = 0;
  /** Where tokens are asked for: the endpoint's url, or its fallbackUrl once that gave one. */
  private tokenUrl: string;

  constructor(
    private readonly settings: OAuth2ClientSettings,
    private readonly endpoint: TokenEndpoint,
    private readonly wording: FailureWording,
  ) {
    this.tokenUrl = endpoint.url;
    const tls =
      settings.certFile && settings.keyFile
        ? {
            cert: readFileSync(settings.certFile),
            key: readFileSync(settings.keyFile),
            ...(settings.caFile ? { ca: readFileSync(settings.caFile) } : {}),
          }
        : {};
    this.dispatcher = new Agent({ connect: tls, keepAliveTimeout: 10_000 });
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /** The cached token, or a new one; concurrent callers share one token request. */
  async bearer(timeoutMs = this.settings.timeoutMs): Promise<string> {
    if (this.token && Date.now() < this.token.expiresAt) return this.token.value;
    this.pendingToken ??= this.fetchToken(timeoutMs).finally(() => (this.pendingToken = undefined));
    return this.pendingToken;
  }

  /**
   * The provider no longer takes `rejected` (revoked, or its clock ran ahead): the next bearer() asks anew, unless
   * the cached token is already another one. Calls in flight with the old token get their 401s back one by one, and
   * one that comes back after a new token was fetched must not throw that one away: each would fetch yet another
   * (and a provider that keeps one token per client would revoke the one the others are using).
   */
  invalidate(rejected: string): void {
    if (this.token?.value === rejected) this.token = undefined;
  }

  /**
   * One call with the cached bearer token; a 401 fetches a new token and sends once more, and a second 401 is
   * RailUnavailableError (wrong credentials: an operator must fix them; retried after a minute). Answers below 500
   * are returned for the caller to read; 5xx, 408, 425, 429, a timeout or a refused connection is
   * RailUnavailableError.
   */
  async request(method: string, url: string, options: BearerRequest = {}): Promise<ProviderResponse> {
    const timeoutMs = options.timeoutMs ?? this.settings.timeoutMs;
    const token = await this.bearer(timeoutMs);
    const first = await this.send(method, url, options, token, timeoutMs);
    if (first.status !== 401) return first;
    this.invalidate(token);
    const second = await this.send(method, url, options, await this.bearer(timeoutMs), timeoutMs);
    if (second.status === 401) throw new RailUnavailableError(this.wording.refused, 60);
    return second;
  }

  private send(method: string, url: string, options: BearerRequest, token: string, timeoutMs: number) {
    const target = new URL(url);
    for (const [k, v] of Object.entries(options.query ?? {})) target.searchParams.set(k, String(v));
    const hasBody = options.body !== undefined;
    return this.call(target.toString(), timeoutMs, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...options.headers?.(),
        ...(hasBody ? { 'content-type': 'application/json' } : {}),
      },
      ...(hasBody ? { body: JSON.stringify(options.body) } : {}),
    });
  }

  private async fetchToken(timeoutMs: number): Promise<string> {
    const { fallbackUrl } = this.endpoint;
    let res = await this.askToken(this.tokenUrl, timeoutMs);
    // Any refusal, not only a 404: a gateway guarding the API's base answers a token asked there 401, 403 or 405.
    // Wrong credentials are refused at both, and the second refusal is the one reported.
    if (res.status !== 200 && fallbackUrl && this.tokenUrl !== fallbackUrl) {
      res = await this.askToken(fallbackUrl, timeoutMs);
      if (res.status === 200) this.tokenUrl = fallbackUrl;
    }
    const body = res.body as { access_token?: unknown; expires_in?: unknown };
    if (res.status !== 200 || typeof body?.access_token !== 'string') {
      throw new RailUnavailableError(this.wording.noToken(res.status), 60);
    }
    this.tokensFetched++;
    const ttlMs = (typeof body.expires_in === 'number' ? body.expires_in : this.endpoint.defaultTtlSeconds) * 1000;
    this.token = { value: body.access_token, expiresAt: Date.now() + Math.max(ttlMs - TOKEN_MARGIN_MS, ttlMs / 2) };
    return body.access_token;
  }

  private askToken(url: string, timeoutMs: number): Promise<ProviderResponse> {
    const { clientId, clientSecret } = this.settings;
    const basic = Buffer.from(`${clientId}:${clientSecret}`).toString('base64');
    const headers: Record<string, string> = {
      ...(this.endpoint.credentials === 'basic' ? { authorization: `Basic ${basic}` } : {}),
      'content-type': 'application/x-www-form-urlencoded',
    };
    const form = new URLSearchParams();
    if (this.endpoint.credentials === 'form') {
      form.set('client_id', clientId);
      form.set('client_secret', clientSecret);
    }
    form.set('grant_type', 'client_credentials');
    if (this.endpoint.scope) form.set('scope', this.endpoint.scope);
    return this.call(url, timeoutMs, { method: 'POST', headers, body: form.toString() });
  }

  /** One HTTP exchange through the pool: a JSON body parsed, any other kept as text; "not now" thrown. */
  private async call(url: string, timeoutMs: number, init: CallInit): Promise<ProviderResponse> {
    const where = `${init.method} ${new URL(url).pathname}`;
    let res;
    let text: string;
    try {
      res = await fetch(url, { ...init, dispatcher: this.dispatcher, signal: AbortSignal.timeout(timeoutMs) });
      text = await res.text();
    } catch (err) {
      throw new RailUnavailableError(this.wording.unreachable(where, err));
    }
    if (isTransientStatus(res.status)) {
      const retryAfter = Number(res.headers.get('retry-after'));
      throw new RailUnavailableError(
        this.wording.answered(res.status, where),
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
