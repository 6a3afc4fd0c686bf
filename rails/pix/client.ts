import { RailUnavailableError } from '../errors';
import { OAuth2Session, type BearerRequest, type OAuth2ClientSettings, type ProviderResponse } from '../oauth2-session';

// The PSP's HTTP API as the BCB's API Pix defines it: OAuth2 client credentials (HTTP Basic at `POST /oauth/token`,
// or PIX_TOKEN_URL) and, in production, mTLS. This module knows the protocol (paths, the token request, what its
// errors say) and no business rule; connector.ts translates. The token, the connection pool and what a failure is
// are rails/oauth2-session.ts's.

export interface PixClientOptions extends OAuth2ClientSettings {
  /** PIX_PSP_URL: the PSP's base URL, without a trailing slash. */
  baseUrl: string;
  /** PEM files for mTLS (PIX_CERT_FILE, PIX_KEY_FILE, PIX_CA_FILE); the BCB's security manual requires them. */
  certFile?: string;
  /**
   * PIX_TOKEN_URL: the token endpoint. Unset: `{baseUrl}/oauth/token`, and when that refuses, the spec's place,
   * `/oauth/token` at the base URL's origin (openapi.yaml serves the API at `https://pix.example.com/api/` and the
   * token at `https://pix.example.com/oauth/token`).
   */
  tokenUrl?: string;
  /** PIX_SCOPE: the scopes asked for with the token (API Pix's `cob.write cob.read pix.write ...`); none when unset. */
  scope?: string;
}

export type PixResponse = ProviderResponse;

export interface RequestOptions extends Omit<BearerRequest, 'headers'> {
  /** Overrides the client's timeout for this call (the deposit POST waits less than an activity). */
  timeoutMs?: number;
}

export class PixClient {
  private readonly session: OAuth2Session;

  constructor(private readonly options: PixClientOptions) {
    this.session = new OAuth2Session(
      options,
      {
        url: options.tokenUrl ?? `${options.baseUrl}/oauth/token`,
        ...(options.tokenUrl ? {} : { fallbackUrl: `${new URL(options.baseUrl).origin}/oauth/token` }),
        ...(options.scope ? { scope: options.scope } : {}),
        credentials: 'basic',
        defaultTtlSeconds: 300,
      },
      {
        unreachable: (where, err) => `PSP unreachable: ${where}: ${describe(err)}`,
        answered: (status, where) => `PSP answered ${status} to ${where}`,
        noToken: (status) => `the PSP gave no token (HTTP ${status})`,
        refused: 'the PSP refuses our credentials (PIX_CLIENT_ID)',
      },
    );
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
   * ran ahead): a new one is fetched and the call sent once more. Answers below 500 are returned for the caller to
   * read; 403, 5xx, 408, 425, 429, a timeout or a refused connection is RailUnavailableError.
   */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<PixResponse> {
    const res = await this.session.request(method, `${this.options.baseUrl}${path}`, options);
    // API Pix's 403 AcessoNegado: our client lacks a scope or a permission, which an operator fixes. It says nothing
    // of the charge, payout or return asked, so it is "not now" (a deposit's 503, a payout left pending), never
    // a refusal that fails the customer's request or releases a payout's hold.
    if (res.status === 403) {
      throw new RailUnavailableError(
        `the PSP denies PIX_CLIENT_ID access to ${method} ${path} (403): check its scopes`,
        60,
      );
    }
    return res;
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? err.name ?? err.message;
  }
  return String(err);
}
