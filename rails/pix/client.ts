import { OAuth2Session, type ProviderResponse } from '../oauth2-session';

// The PSP's HTTP API as the BCB's API Pix defines it: OAuth2 client credentials and, in production, mTLS. This
// module knows the protocol (paths, the token request, what its errors say) and no business rule; connector.ts
// translates. The token, the connection pool and what a failure is are rails/oauth2-session.ts's.

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

export type PixResponse = ProviderResponse;

export interface RequestOptions {
  query?: Record<string, string | number>;
  body?: unknown;
  /** Overrides the client's timeout for this call (the deposit POST waits less than an activity). */
  timeoutMs?: number;
}

export class PixClient {
  private readonly session: OAuth2Session;

  constructor(private readonly options: PixClientOptions) {
    this.session = new OAuth2Session({
      tokenUrl: `${options.baseUrl}/oauth/token`,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      credentials: 'basic',
      defaultTtlSeconds: 300,
      certFile: options.certFile,
      keyFile: options.keyFile,
      caFile: options.caFile,
      timeoutMs: options.timeoutMs,
      wording: {
        unreachable: (where, err) => `PSP unreachable: ${where}: ${describe(err)}`,
        answered: (status, where) => `PSP answered ${status} to ${where}`,
        noToken: (status) => `the PSP gave no token (HTTP ${status})`,
        refused: 'the PSP refuses our credentials (PIX_CLIENT_ID)',
      },
    });
  }

  /** Tokens fetched since start: the contract suite checks that they are cached. */
  get tokensFetched(): number {
    return this.session.tokensFetched;
  }

  async close(): Promise<void> {
    await this.session.close();
  }

  /**
   * One call with a bearer token. A 401 means the PSP no longer takes the cached token (revoked, or its clock
   * ran ahead): fetch a new one and send once more. Answers below 500 are returned for the caller to read;
   * 5xx, 408, 425, 429, a timeout or a refused connection is RailUnavailableError.
   */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<PixResponse> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    return this.session.authorized((token) => this.send(method, path, options, token, timeoutMs), timeoutMs);
  }

  private send(method: string, path: string, options: RequestOptions, token: string, timeoutMs: number) {
    const url = new URL(`${this.options.baseUrl}${path}`);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, String(v));
    const hasBody = options.body !== undefined;
    return this.session.call(url.toString(), timeoutMs, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(hasBody ? { 'content-type': 'application/json' } : {}) },
      ...(hasBody ? { body: JSON.stringify(options.body) } : {}),
    });
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? err.name ?? err.message;
  }
  return String(err);
}
