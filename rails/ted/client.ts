import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, fetch, type Dispatcher } from 'undici';
import { isTransientStatus, RailUnavailableError } from '../errors';

// The bank's Open Finance Brasil Accounts API as a client: OAuth2 client credentials at `{TED_ACCOUNTS_URL}/token`
// (HTTP Basic, grant_type=client_credentials), the token cached until shortly before it expires and fetched again
// once on a 401, mTLS when the files are set. Protocol only: transactions.ts and connector.ts translate.

export interface TedClientOptions {
  /** TED_ACCOUNTS_URL, without a trailing slash. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  certFile?: string;
  keyFile?: string;
  caFile?: string;
  timeoutMs: number;
}

export interface BankResponse {
  status: number;
  body: unknown;
}

// A token is used until this long before the expiry the bank announced: no request carries one that expires on the way.
const TOKEN_MARGIN_MS = 30_000;

export class TedClient {
  private token: { value: string; expiresAt: number } | undefined;
  private pendingToken: Promise<string> | undefined;
  private readonly dispatcher: Dispatcher;
  /** Tokens fetched since start: the tests check that they are cached. */
  tokensFetched = 0;

  constructor(private readonly options: TedClientOptions) {
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
   * A GET with a bearer token; a 401 fetches a new token and asks once more. Answers below 500 are returned;
   * 5xx, 408, 425, 429, a timeout or a refused connection is RailUnavailableError (the poll retries).
   */
  async get(path: string, query: Record<string, string | number>): Promise<BankResponse> {
    const first = await this.send(path, query, await this.bearer());
    if (first.status !== 401) return first;
    this.token = undefined;
    const second = await this.send(path, query, await this.bearer());
    if (second.status === 401) throw new RailUnavailableError('the bank refuses our credentials (TED_CLIENT_ID)', 60);
    return second;
  }

  private bearer(): Promise<string> {
    if (this.token && Date.now() < this.token.expiresAt) return Promise.resolve(this.token.value);
    // Concurrent callers share one token request.
    this.pendingToken ??= this.fetchToken().finally(() => (this.pendingToken = undefined));
    return this.pendingToken;
  }

  private async fetchToken(): Promise<string> {
    const basic = Buffer.from(`${this.options.clientId}:${this.options.clientSecret}`).toString('base64');
    const res = await this.call(`${this.options.baseUrl}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    const body = res.body as { access_token?: unknown; expires_in?: unknown };
    if (res.status !== 200 || typeof body?.access_token !== 'string') {
      throw new RailUnavailableError(`the bank gave no token (HTTP ${res.status})`, 60);
    }
    this.tokensFetched++;
    const ttlMs = (typeof body.expires_in === 'number' ? body.expires_in : 300) * 1000;
    this.token = { value: body.access_token, expiresAt: Date.now() + Math.max(ttlMs - TOKEN_MARGIN_MS, ttlMs / 2) };
    return body.access_token;
  }

  private send(path: string, query: Record<string, string | number>, token: string) {
    const url = new URL(`${this.options.baseUrl}${path}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
    // x-fapi-interaction-id: the Open Finance correlation id the bank logs beside ours.
    const headers = { authorization: `Bearer ${token}`, 'x-fapi-interaction-id': randomUUID() };
    return this.call(url.toString(), { method: 'GET', headers });
  }

  private async call(
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string },
  ): Promise<BankResponse> {
    const where = `${init.method} ${new URL(url).pathname}`;
    let res;
    let text: string;
    try {
      const signal = AbortSignal.timeout(this.options.timeoutMs);
      res = await fetch(url, { ...init, dispatcher: this.dispatcher, signal });
      text = await res.text();
    } catch (err) {
      throw new RailUnavailableError(`bank unreachable: ${where}: ${(err as Error).message}`);
    }
    if (isTransientStatus(res.status)) {
      const retryAfter = Number(res.headers.get('retry-after'));
      throw new RailUnavailableError(
        `the bank answered ${res.status} to ${where}`,
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
