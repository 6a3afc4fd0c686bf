// TED (../shared/spec/decisions.md, "TED from the customer's own bank account"): a deposit shows Cambio's collection
// account and the CNPJ the TED must come from (the account owner's); the credits of that account are read on a
// Schedule from the bank's Open Finance Brasil Accounts API v2, and each is matched by its payer and exact amount
// (payments/payer-matching.ts), not by a charge id.
import type { Config } from '../../config';
import type { RailEntry } from '../rail';
import { TedClient } from './client';
import { SANDBOX_TED_ACCOUNT } from './config';
import { TED_ASSET, TED_RAIL, TedRail } from './connector';
import { TedSandboxPayer } from './sandbox-payer';

export { TedRail } from './connector';

/** The TED rail of this deployment: its collection account and the bank that lists it, or undefined. */
export function tedRailFromConfig(config: Config): TedRail | undefined {
  const ted = config.ted;
  if (!tedHasProvider(config)) return undefined;
  const client = new TedClient({
    baseUrl: ted.accountsUrl!,
    clientId: ted.clientId,
    clientSecret: ted.clientSecret,
    certFile: ted.certFile,
    keyFile: ted.keyFile,
    caFile: ted.caFile,
    timeoutMs: ted.timeoutMs,
  });
  return new TedRail(client, {
    accountId: ted.accountId,
    pageSize: ted.pageSize,
    ...(config.sandbox ? { sandbox: new TedSandboxPayer(ted.accountsUrl!, ted.accountId) } : {}),
  });
}

/** A collection account to show and a bank to read it from (a test's config may carry no `ted` at all). */
const tedHasProvider = (config: Config): boolean =>
  !!config.ted?.account && !!config.ted.accountsUrl && !!config.ted.accountId;

const text = (description: string) => ({ type: 'string', description });

export const tedRail: RailEntry = {
  rail: TED_RAIL,
  slug: 'ted',
  assets: [TED_ASSET],
  transactionType: TED_RAIL,
  recordedBy: 'connector',
  // The bank's statement is also what an operator reads: one may record a credit under its transactionId while the
  // bank's API is down, and the next poll finds it recorded (decision 0129).
  operatorMayRecord: true,
  matchBy: 'payer',
  // The bank's API only reads: a TED goes back by a TED the operator sends at the bank, recorded with --outside.
  returnedBy: 'outside',
  providerSetting: 'TED_ACCOUNTS_URL',
  instruction: {
    summary:
      "TED to Cambio's collection account (`bankCode`, `branchCode`, `accountNumber`, `accountDigit`, `holderName`, " +
      "`holderTaxId`), from an account whose owner is `payerTaxId` (the account owner's CNPJ), for exactly the " +
      "quote's source amount, received by the bank before `expiresAt` (the deposit window's end)",
    properties: {
      bankCode: text("TED: the collection bank's COMPE code (3 digits)"),
      branchCode: text('TED: the branch ("agência")'),
      accountNumber: text('TED: the account number, without its check digit'),
      accountDigit: text("TED: the account number's check digit"),
      holderName: text('TED: the collection account holder'),
      holderTaxId: text("TED: the collection account holder's CNPJ (digits, and an alphanumeric CNPJ's letters)"),
      payerTaxId: text(
        "TED: the CNPJ (digits) the TED must come from, the account owner's: a TED from anyone else, or for another " +
          'amount, completes no deposit and is held for an operator',
      ),
    },
  },
  fundingInstruction: (_operationId, _asset, dueDate, deposit) => {
    // A sandbox whose SANDBOX came from elsewhere than the environment (a test's config), or a caller with no
    // deployment's settings at all (the registry's shape), is shown the sandbox's account.
    const sandbox = !deposit || deposit.config.sandbox;
    const account = deposit?.config.ted?.account ?? (sandbox ? SANDBOX_TED_ACCOUNT : undefined);
    // requireRailConfigured refused the deposit before (RAIL_NOT_CONFIGURED); this is the last guard.
    if (!account) throw new Error('TED_ACCOUNT_* is not configured');
    // The window's end, so a TED the bank received after it completes no deposit of a worker late to expire it
    // (payments/payer-matching.ts, decision 0318).
    return { rail: TED_RAIL, ...account, payerTaxId: deposit?.ownerTaxId ?? '', expiresAt: dueDate.toISOString() };
  },
  // Outside sandbox a TED deposit needs the collection account and its bank (else 422 RAIL_NOT_CONFIGURED).
  hasProvider: tedHasProvider,
  // A TED the bank received in the window is listed by the next poll, perhaps after the window: two polls' worth
  // covers one that fails. A credit received after the window matches no deposit of it (payer-matching.ts), so the
  // wait takes nothing paid late (decision 0321). Without a bank nobody's TED is read, and nothing arrives late.
  lateArrivalSeconds: (config) => (tedHasProvider(config) ? 2 * config.ted.pollSeconds : 0),
  reconciliation: {
    everySeconds: (config) => config.ted.pollSeconds,
    from: () => undefined,
    note: (config) =>
      "Reads the TEDs credited to the collection account (Open Finance Accounts API v2) since the last run's " +
      `booking days (TED_POLL_SECONDS=${config.ted.pollSeconds})`,
  },
  connector: tedRailFromConfig,
};
