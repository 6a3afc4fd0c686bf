import { readFileSync } from 'node:fs';
import { Agent, fetch, type Dispatcher } from 'undici';
import { isTransientStatus, RailUnavailableError } from '../errors';

// The bank's collection API as Banco Inter's Cobrança v3 speaks it: OAuth2 client credentials at `POST
// /oauth/v2/token` (the id and secret in the form, with the scopes asked for) and mTLS. Protocol only (auth, timeouts,
// what a failure is); connector.ts translates into Cambio's rail boundary.

export interface BoletoClientOptions {
  /** BOLETO_BANK_URL, without a trailing slash. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** PEM files for mTLS (BOLETO_CERT_FILE, BOLETO_KEY_FILE, BOLETO_CA_FILE): Inter issues a certificate per app. */
  certFile?: string;
  keyFile?: string;
  caFile?: string;
  timeoutMs: number;
}

export interface BankResponse {
  status: number;
  body: unknown;
}

export interface BankRequest {
  query?: Record<string, string | number>;
  body?: unknown;
  timeoutMs?: number;
}

const SCOPES = 'boleto-cobranca.read boleto-cobranca.write';
// A token is used until this long before the expiry the bank announced (Inter: 60 minutes).
const TOKEN_MARGIN_MS = 30_000;

export class BoletoClient {
  private token: { value: string; expiresAt: number } | undefined;
  private pendingToken: Promise<string> | undefined;
  private readonly dispatcher: Dispatcher;
  tokensFetched = 0;

  constructor(private readonly options: BoletoClientOptions) {
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
   * One call with the cached bearer token; a 401 fetches a new token and sends once more. Answers below 500 are
   * the caller's to read; 5xx, 408, 425, 429, a timeout or a refused connection is RailUnavailableError.
   */
  async request(method: string, path: string, options: BankRequest = {}): Promise<BankResponse> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    const first = await this.send(method, path, options, await this.bearer(timeoutMs), timeoutMs);
    if (first.status !== 401) return first;
    this.token = undefined;
    const second = await this.send(method, path, options, await this.bearer(timeoutMs), timeoutMs);
    if (second.status === 401)
      throw new RailUnavailableError('the bank refuses our credentials (BOLETO_CLIENT_ID)', 60);
    return second;
  }

  private async bearer(timeoutMs: number): Promise<string> {
    if (this.token && Date.now() < this.token.expiresAt) return this.token.value;
    this.pendingToken ??= this.fetchToken(timeoutMs).finally(() => (this.pendingToken = undefined));
    return this.pendingToken;
  }

  private async fetchToken(timeoutMs: number): Promise<string> {
    const form = new URLSearchParams({
      client_id: this.options.clientId,
      client_secret: this.options.clientSecret,
      grant_type: 'client_credentials',
      scope: SCOPES,
    });
    const res = await this.call(`${this.options.baseUrl}/oauth/v2/token`, timeoutMs, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    const body = res.body as { access_token?: unknown; expires_in?: unknown };
    if (res.status !== 200 || typeof body?.access_token !== 'string') {
      throw new RailUnavailableError(`the bank gave no token (HTTP ${res.status})`, 60);
    }
    this.tokensFetched++;
    const ttlMs = (typeof body.expires_in === 'number' ? body.expires_in : 3600) * 1000;
    this.token = { value: body.access_token, expiresAt: Date.now() + Math.max(ttlMs - TOKEN_MARGIN_MS, ttlMs / 2) };
    return body.access_token;
  }

  private send(method: string, path: string, options: BankRequest, token: string, timeoutMs: number) {
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
  ): Promise<BankResponse> {
    const where = `${init.method} ${new URL(url).pathname}`;
    let res;
    let text: string;
    try {
      res = await fetch(url, { ...init, dispatcher: this.dispatcher, signal: AbortSignal.timeout(timeoutMs) });
      text = await res.text();
    } catch (err) {
      throw new RailUnavailableError(`bank unreachable: ${where}: ${(err as Error).name}`);
    }
    if (isTransientStatus(res.status)) {
      const retryAfter = Number(res.headers.get('retry-after'));
      throw new RailUnavailableError(
        `bank answered ${res.status} to ${where}`,
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
