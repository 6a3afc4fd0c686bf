import { randomUUID } from 'node:crypto';
import { OAuth2Session, type OAuth2ClientSettings, type ProviderResponse } from '../oauth2-session';

// The bank's Open Finance Brasil Accounts API as a client: OAuth2 client credentials at `{TED_ACCOUNTS_URL}/token`
// (HTTP Basic, grant_type=client_credentials), mTLS when the files are set. Protocol only (paths, the token request,
// what its errors say): transactions.ts and connector.ts translate. The token (cached until shortly before it
// expires, fetched again once on a 401), the connection pool and what a failure is are rails/oauth2-session.ts's.

export interface TedClientOptions extends OAuth2ClientSettings {
  /** TED_ACCOUNTS_URL, without a trailing slash. */
  baseUrl: string;
}

export type BankResponse = ProviderResponse;

export class TedClient {
  private readonly session: OAuth2Session;

  constructor(private readonly options: TedClientOptions) {
    this.session = new OAuth2Session(
      options,
      { url: `${options.baseUrl}/token`, credentials: 'basic', defaultTtlSeconds: 300 },
      {
        unreachable: (where, err) => `bank unreachable: ${where}: ${(err as Error).message}`,
        answered: (status, where) => `the bank answered ${status} to ${where}`,
        noToken: (status) => `the bank gave no token (HTTP ${status})`,
        refused: 'the bank refuses our credentials (TED_CLIENT_ID)',
      },
    );
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
  get(path: string, query: Record<string, string | number>): Promise<BankResponse> {
    // x-fapi-interaction-id: the Open Finance correlation id the bank logs beside ours, one per attempt.
    const headers = () => ({ 'x-fapi-interaction-id': randomUUID() });
    return this.session.request('GET', `${this.options.baseUrl}${path}`, { query, headers });
  }
}
