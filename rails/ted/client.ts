import { randomUUID } from 'node:crypto';
import { OAuth2Session, type ProviderResponse } from '../oauth2-session';

// The bank's Open Finance Brasil Accounts API as a client: OAuth2 client credentials at `{TED_ACCOUNTS_URL}/token`
// (HTTP Basic, grant_type=client_credentials), mTLS when the files are set. Protocol only (paths, the token request,
// what its errors say): transactions.ts and connector.ts translate. The token (cached until shortly before it
// expires, fetched again once on a 401), the connection pool and what a failure is are rails/oauth2-session.ts's.

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

export type BankResponse = ProviderResponse;

export class TedClient {
  private readonly session: OAuth2Session;

  constructor(private readonly options: TedClientOptions) {
    this.session = new OAuth2Session({
      tokenUrl: `${options.baseUrl}/token`,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      credentials: 'basic',
      defaultTtlSeconds: 300,
      certFile: options.certFile,
      keyFile: options.keyFile,
      caFile: options.caFile,
      timeoutMs: options.timeoutMs,
      wording: {
        unreachable: (where, err) => `bank unreachable: ${where}: ${(err as Error).message}`,
        answered: (status, where) => `the bank answered ${status} to ${where}`,
        noToken: (status) => `the bank gave no token (HTTP ${status})`,
        refused: 'the bank refuses our credentials (TED_CLIENT_ID)',
      },
    });
  }

  /** Tokens fetched since start: the tests check that they are cached. */
  get tokensFetched(): number {
    return this.session.tokensFetched;
  }

  async close(): Promise<void> {
    await this.session.close();
  }

  /**
   * A GET with a bearer token; a 401 fetches a new token and asks once more. Answers below 500 are returned;
   * 5xx, 408, 425, 429, a timeout or a refused connection is RailUnavailableError (the poll retries).
   */
  async get(path: string, query: Record<string, string | number>): Promise<BankResponse> {
    return this.session.authorized((token) => this.send(path, query, token));
  }

  private send(path: string, query: Record<string, string | number>, token: string) {
    const url = new URL(`${this.options.baseUrl}${path}`);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
    // x-fapi-interaction-id: the Open Finance correlation id the bank logs beside ours.
    const headers = { authorization: `Bearer ${token}`, 'x-fapi-interaction-id': randomUUID() };
    return this.session.call(url.toString(), this.options.timeoutMs, { method: 'GET', headers });
  }
}
