// TED's settings (TED_*), read here for config/index.ts (`config.ted`): Cambio's collection account (what a TED
// deposit's funding instruction shows) and the bank's Open Finance Brasil Accounts API v2 that lists its credits
// (docs/configuration.md lists every variable).
import { bool, int } from '../../config/env-values';
import { bareTaxId, isValidCnpj } from '../../domain/tax-id';
import type { RailSettings } from '../../config/rail-settings';

/** The account customers send TEDs to: the bank's COMPE code, branch, number, check digit and holder. */
export interface TedCollectionAccount {
  bankCode: string;
  branchCode: string;
  accountNumber: string;
  accountDigit: string;
  holderName: string;
  /** The holder's CNPJ, bare: digits, and the letters of an alphanumeric CNPJ (upper case). */
  holderTaxId: string;
}

export interface TedConfig {
  /** Unset outside sandbox mode while any of TED_ACCOUNT_* is unset: no collection account, no TED deposits. */
  account: TedCollectionAccount | undefined;
  /** TED_ACCOUNTS_URL: the bank's Accounts API base (`{url}/token`, `{url}/accounts/v2/...`); unset: no poll. */
  accountsUrl: string | undefined;
  /** TED_ACCOUNT_ID: the collection account's `accountId` in that API. */
  accountId: string;
  clientId: string;
  clientSecret: string;
  certFile: string | undefined;
  keyFile: string | undefined;
  caFile: string | undefined;
  /** Bound of one call to the bank (token fetch included). */
  timeoutMs: number;
  /** TED_POLL_SECONDS: how often the schedule reads the account's credits. */
  pollSeconds: number;
  /** Rows asked per page of the transactions list. */
  pageSize: number;
}

// The sandbox's collection account (a simulated bank's): published, so never a default outside sandbox mode.
export const SANDBOX_TED_ACCOUNT: TedCollectionAccount = {
  bankCode: '341',
  branchCode: '0001',
  accountNumber: '12345678',
  accountDigit: '9',
  holderName: 'Cambio Pagamentos Ltda',
  holderTaxId: '11222333000181',
};

export function readTedConfig(env: NodeJS.ProcessEnv): TedConfig {
  const sandbox = bool(env.SANDBOX, false);
  return {
    account: collectionAccount(env, sandbox),
    accountsUrl: env.TED_ACCOUNTS_URL ? env.TED_ACCOUNTS_URL.replace(/\/+$/, '') : undefined,
    accountId: env.TED_ACCOUNT_ID || (sandbox ? 'cambio-collection' : ''),
    clientId: env.TED_CLIENT_ID || 'cambio',
    clientSecret: env.TED_CLIENT_SECRET || 'cambio-dev-ted-secret',
    certFile: env.TED_CERT_FILE || undefined,
    keyFile: env.TED_KEY_FILE || undefined,
    caFile: env.TED_CA_FILE || undefined,
    timeoutMs: int(env.TED_TIMEOUT_MS, 10_000, 'TED_TIMEOUT_MS'),
    pollSeconds: Math.max(1, int(env.TED_POLL_SECONDS, 60, 'TED_POLL_SECONDS')),
    // The Accounts API allows up to 1000 per page; 100 keeps one answer small and one busy day a few pages.
    pageSize: Math.max(1, int(env.TED_PAGE_SIZE, 100, 'TED_PAGE_SIZE')),
  };
}

function collectionAccount(env: NodeJS.ProcessEnv, sandbox: boolean): TedCollectionAccount | undefined {
  const given = {
    bankCode: env.TED_ACCOUNT_BANK_CODE,
    branchCode: env.TED_ACCOUNT_BRANCH,
    accountNumber: env.TED_ACCOUNT_NUMBER,
    accountDigit: env.TED_ACCOUNT_DIGIT,
    holderName: env.TED_ACCOUNT_HOLDER_NAME,
    holderTaxId: holderTaxId(env.TED_ACCOUNT_HOLDER_TAX_ID),
  };
  if (Object.values(given).every((v) => !!v)) return given as TedCollectionAccount;
  // Outside sandbox a deposit never shows an account nobody configured (RAIL_NOT_CONFIGURED instead).
  return sandbox ? { ...SANDBOX_TED_ACCOUNT, ...pickSet(given) } : undefined;
}

/**
 * The holder's CNPJ as a payer's bank asks for it: the alphanumeric CNPJ keeps its letters, and one that is no valid
 * CNPJ stops the start. A TED whose beneficiary's tax id does not match the account's is sent back by the receiving
 * bank, so every deposit would show instructions nobody can pay (decision 0235).
 */
function holderTaxId(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const bare = bareTaxId(value);
  if (!isValidCnpj(bare)) throw new Error(`TED_ACCOUNT_HOLDER_TAX_ID must be a valid CNPJ, got "${value}"`);
  return bare;
}

const pickSet = (o: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => !!v)) as Partial<TedCollectionAccount>;

export const tedSettings: RailSettings<TedConfig> = {
  read: readTedConfig,
  sandboxOnlyValues: ['cambio-dev-ted-secret'],
  // The bank's client secret when its credits are read (TED_ACCOUNTS_URL).
  secrets: (env) => (env.TED_ACCOUNTS_URL ? ['TED_CLIENT_SECRET'] : []),
};
