import { OAuth2Session, type BearerRequest, type OAuth2ClientSettings, type ProviderResponse } from '../oauth2-session';

// The bank's collection API as Banco Inter's Cobrança v3 speaks it: OAuth2 client credentials at `POST
// /oauth/v2/token` (the id and secret in the form, with the scopes asked for) and mTLS. Protocol only (paths, the
// token request, what its errors say); connector.ts translates into Cambio's rail boundary. The token, the
// connection pool and what a failure is are rails/oauth2-session.ts's.

export interface BoletoClientOptions extends OAuth2ClientSettings {
  /** BOLETO_BANK_URL, without a trailing slash. */
  baseUrl: string;
  /** PEM files for mTLS (BOLETO_CERT_FILE, BOLETO_KEY_FILE, BOLETO_CA_FILE): Inter issues a certificate per app. */
  certFile?: string;
}

export type BankResponse = ProviderResponse;

export type BankRequest = Omit<BearerRequest, 'headers'>;

const SCOPES = 'boleto-cobranca.read boleto-cobranca.write';

export class BoletoClient {
  private readonly session: OAuth2Session;

  constructor(private readonly options: BoletoClientOptions) {
    this.session = new OAuth2Session(
      options,
      // Inter's tokens live 60 minutes.
      { url: `${options.baseUrl}/oauth/v2/token`, credentials: 'form', scope: SCOPES, defaultTtlSeconds: 3600 },
      {
        unreachable: (where, err) => `bank unreachable: ${where}: ${(err as Error).name}`,
        answered: (status, where) => `bank answered ${status} to ${where}`,
        noToken: (status) => `the bank gave no token (HTTP ${status})`,
        refused: 'the bank refuses our credentials (BOLETO_CLIENT_ID)',
      },
    );
  }

  get tokensFetched(): number {
    return this.session.tokensFetched;
  }

  async close(): Promise<void> {
    await this.session.close();
  }

  /**
   * One call with the cached bearer token; a 401 fetches a new token and sends once more. Answers below 500 are
   * the caller's to read; 5xx, 408, 425, 429, a timeout or a refused connection is RailUnavailableError.
   */
  request(method: string, path: string, options: BankRequest = {}): Promise<BankResponse> {
    return this.session.request(method, `${this.options.baseUrl}${path}`, options);
  }
}
