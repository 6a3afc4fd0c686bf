import { OAuth2Session, type ProviderResponse } from '../oauth2-session';

// The bank's collection API as Banco Inter's Cobrança v3 speaks it: OAuth2 client credentials at `POST
// /oauth/v2/token` (the id and secret in the form, with the scopes asked for) and mTLS. Protocol only (paths, the
// token request, what its errors say); connector.ts translates into Cambio's rail boundary. The token, the
// connection pool and what a failure is are rails/oauth2-session.ts's.

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

export type BankResponse = ProviderResponse;

export interface BankRequest {
  query?: Record<string, string | number>;
  body?: unknown;
  timeoutMs?: number;
}

const SCOPES = 'boleto-cobranca.read boleto-cobranca.write';

export class BoletoClient {
  private readonly session: OAuth2Session;

  constructor(private readonly options: BoletoClientOptions) {
    this.session = new OAuth2Session({
      tokenUrl: `${options.baseUrl}/oauth/v2/token`,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      credentials: 'form',
      scope: SCOPES,
      // Inter's tokens live 60 minutes.
      defaultTtlSeconds: 3600,
      certFile: options.certFile,
      keyFile: options.keyFile,
      caFile: options.caFile,
      timeoutMs: options.timeoutMs,
      wording: {
        unreachable: (where, err) => `bank unreachable: ${where}: ${(err as Error).name}`,
        answered: (status, where) => `bank answered ${status} to ${where}`,
        noToken: (status) => `the bank gave no token (HTTP ${status})`,
        refused: 'the bank refuses our credentials (BOLETO_CLIENT_ID)',
      },
    });
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
  async request(method: string, path: string, options: BankRequest = {}): Promise<BankResponse> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    return this.session.authorized((token) => this.send(method, path, options, token, timeoutMs), timeoutMs);
  }

  private send(method: string, path: string, options: BankRequest, token: string, timeoutMs: number) {
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
