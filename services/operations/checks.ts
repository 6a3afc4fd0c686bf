import type { Account } from '../../db/entities';
import type { Config } from '../../config';
import { CambioError, type ErrorCode } from '../../domain/errors';
import { railEntry } from '../../rails/registry';

/** What every operation's creation refuses with: it looks the account and the quote up and checks the account. */
export const ACCOUNT_AND_QUOTE_REFUSALS: readonly ErrorCode[] = [
  'NOT_FOUND',
  'QUOTE_NOT_FOUND',
  'QUOTE_ACCOUNT_MISMATCH',
  'QUOTE_ALREADY_CONSUMED',
  'QUOTE_EXPIRED',
  'ACCOUNT_NOT_ACTIVE',
  'ASSET_NOT_ENABLED',
];

/** An asset can move on an account once onboarding activated it there. */
export function requireAssetEnabled(account: Account, asset: string): void {
  const entry = account.assets.find((a) => a.asset === asset);
  if (!entry || entry.status !== 'ACTIVE') {
    throw new CambioError('ASSET_NOT_ENABLED', `${asset} is not enabled on account ${account.id}`, {
      accountId: account.id,
      asset,
    });
  }
}

/**
 * PIX moves real money only through a PSP (PIX_PSP_URL). Without one, outside the sandbox, nothing could pay the
 * deposit or send the payout: refuse before any hold. (The sandbox always has one: `npm start` and the tests run
 * the simulated PSP.)
 */
export function requireRailConfigured(config: Config, rail: string): void {
  const entry = railEntry(rail);
  // CRYPTO too (EVM_RPC_URL), though an operator may also record its transfers (decision 0130).
  if (!entry?.providerSetting || config.sandbox || entry.hasProvider(config)) return;
  throw notConfigured(rail);
}

/**
 * A payout leaves only through a PSP, in the sandbox too (../shared/spec/decisions.md, "A claim is not money"; decision
 * 0108): a PIX withdrawal with no PSP configured is refused before any hold, whatever SANDBOX says. (A sandbox deposit
 * without one still takes the sandbox route's payments.)
 */
export function requirePayoutRail(config: Config, rail: string, asset: string): void {
  const entry = railEntry(rail);
  // CRYPTO pays out from the hot wallet: the node, its key (decision 0134) and the stablecoin's contract (0209).
  if (entry?.canPayOut) {
    if (entry.canPayOut(config, asset)) return;
    throw new CambioError(
      'RAIL_NOT_CONFIGURED',
      `${rail} payouts in ${asset} need the node (${entry.providerSetting}), the hot wallet's key ` +
        `(CRYPTO_HOT_WALLET_KEY_FILE) and ${asset}'s contract (EVM_TOKEN_${asset})`,
      { rail, asset },
    );
  }
  if (entry?.recordedBy !== 'connector' || entry.hasProvider(config)) return;
  throw notConfigured(rail);
}

/**
 * A WALLET is paid on the chain this deployment pays on (CRYPTO_NETWORK) or not at all: its address was checked and
 * approved on its own network, and on another one the same address may be a contract that does not exist there, or
 * someone else's (decision 0210). A PIX key has no network.
 */
export function requirePayoutNetwork(config: Config, instruction: { rail: string; network?: string | null }): void {
  if (!instruction.network || instruction.network === config.crypto.network) return;
  throw new CambioError(
    'RAIL_NOT_CONFIGURED',
    `this deployment pays ${instruction.rail} on ${config.crypto.network}; the instruction was approved on ` +
      `${instruction.network}`,
    { rail: instruction.rail, network: instruction.network, payingNetwork: config.crypto.network },
  );
}

const notConfigured = (rail: string) =>
  new CambioError('RAIL_NOT_CONFIGURED', `no PSP is configured for ${rail} (${railEntry(rail)?.providerSetting})`, {
    rail,
  });
