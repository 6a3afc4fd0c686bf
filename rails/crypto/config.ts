// CRYPTO's settings (CRYPTO_*, EVM_*), read here for config/index.ts (`config.crypto`): one EVM chain per deployment
// and the four stablecoins' ERC-20 contracts on it (../shared/spec/decisions.md, "Crypto: stablecoins on a real
// chain (EVM)"). What the chain itself says (its id, each token's decimals) is checked at start (./chain.ts).
import { bool, int } from '../../config/env-values';
import type { RailSettings } from '../../config/rail-settings';

/** The stablecoins the CRYPTO rail moves, each an ERC-20 contract named by EVM_TOKEN_<ASSET>. */
export const CRYPTO_ASSETS = ['USDC', 'USDT', 'EURC', 'BRLT'] as const;
export type CryptoAsset = (typeof CRYPTO_ASSETS)[number];

export interface CryptoConfig {
  /** CRYPTO_NETWORK: the chain's name in funding instructions and WALLET instructions (default ETHEREUM). */
  network: string;
  /** EVM_RPC_URL: the node's JSON-RPC; unset: no CRYPTO rail (npm start runs a local anvil and sets it). */
  rpcUrl: string | undefined;
  /** EVM_CHAIN_ID: what `eth_chainId` must answer at start (a node of another chain is refused). */
  chainId: number;
  /** EVM_TOKEN_<ASSET>: the contract of each stablecoin on the chain; an asset without one is not on the rail. */
  tokens: Partial<Record<CryptoAsset, `0x${string}`>>;
  /** EVM_SCAN_EVERY_SECONDS: how often the deposit scanner's schedule runs. */
  scanEverySeconds: number;
  /** EVM_MAX_BLOCK_RANGE: the most blocks one `eth_getLogs` asks for. */
  maxBlockRange: number;
  /** EVM_CONFIRMATIONS: blocks (the transfer's own included) before a transfer is money. */
  confirmations: number;
  /**
   * EVM_BLOCK_SECONDS: the chain's time between blocks (Ethereum's 12 by default): how long a transfer mined in a
   * deposit's window may take to be confirmed after it (decision 0322).
   */
  blockSeconds: number;
  /** CRYPTO_DEPOSIT_XPUB: the BIP-32 extended public key deposit addresses derive from (`0/i` below it). */
  depositXpub: string | undefined;
  /** CRYPTO_HOT_WALLET_KEY_FILE: a file holding the hot wallet's 32-byte hex key (payouts and returns). */
  hotWalletKeyFile: string | undefined;
  /** CRYPTO_HOT_WALLET_KEY: the key itself, outside production only (SANDBOX on); never logged, never stored. */
  hotWalletKey: string | undefined;
  /**
   * EVM_SANDBOX_PAYER_KEY: the key of the sandbox's payer, a funded account of the local chain that the sandbox
   * inbound-payment route sends deposits from (decision 0140); sandbox only, never the hot wallet's.
   */
  sandboxPayerKey: `0x${string}` | undefined;
  /** Bound of one JSON-RPC call. */
  timeoutMs: number;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function tokenAddress(asset: CryptoAsset, raw: string | undefined): `0x${string}` | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  if (!ADDRESS.test(value)) {
    throw new Error(`EVM_TOKEN_${asset} must be a contract address (0x and 40 hex digits), got "${value}"`);
  }
  return value as `0x${string}`;
}

export function readCryptoConfig(env: NodeJS.ProcessEnv): CryptoConfig {
  const sandbox = bool(env.SANDBOX, false);
  const hotWalletKey = env.CRYPTO_HOT_WALLET_KEY?.trim() || undefined;
  // A key in the environment is visible to every process that can read it: production takes it from a file only.
  if (hotWalletKey && !sandbox) {
    throw new Error('CRYPTO_HOT_WALLET_KEY is for sandbox mode only; outside it use CRYPTO_HOT_WALLET_KEY_FILE');
  }
  const sandboxPayerKey = env.EVM_SANDBOX_PAYER_KEY?.trim() || undefined;
  // A production deployment pays no deposit itself: a key that would is refused rather than ignored.
  if (sandboxPayerKey && !sandbox) throw new Error('EVM_SANDBOX_PAYER_KEY is for sandbox mode only (SANDBOX=true)');
  if (sandboxPayerKey && !/^(0x)?[0-9a-fA-F]{64}$/.test(sandboxPayerKey)) {
    throw new Error('EVM_SANDBOX_PAYER_KEY must be a 32-byte hex private key');
  }
  const raw: Record<CryptoAsset, string | undefined> = {
    USDC: env.EVM_TOKEN_USDC,
    USDT: env.EVM_TOKEN_USDT,
    EURC: env.EVM_TOKEN_EURC,
    BRLT: env.EVM_TOKEN_BRLT,
  };
  const tokens: CryptoConfig['tokens'] = {};
  for (const asset of CRYPTO_ASSETS) {
    const address = tokenAddress(asset, raw[asset]);
    if (address) tokens[asset] = address;
  }
  return {
    network: (env.CRYPTO_NETWORK || 'ETHEREUM').toUpperCase(),
    rpcUrl: env.EVM_RPC_URL || undefined,
    // 1: Ethereum mainnet, which CRYPTO_NETWORK's default names.
    chainId: int(env.EVM_CHAIN_ID, 1, 'EVM_CHAIN_ID'),
    tokens,
    scanEverySeconds: Math.max(1, int(env.EVM_SCAN_EVERY_SECONDS, 5, 'EVM_SCAN_EVERY_SECONDS')),
    maxBlockRange: Math.max(1, int(env.EVM_MAX_BLOCK_RANGE, 1000, 'EVM_MAX_BLOCK_RANGE')),
    confirmations: Math.max(1, int(env.EVM_CONFIRMATIONS, 12, 'EVM_CONFIRMATIONS')),
    blockSeconds: Math.max(1, int(env.EVM_BLOCK_SECONDS, 12, 'EVM_BLOCK_SECONDS')),
    depositXpub: env.CRYPTO_DEPOSIT_XPUB?.trim() || undefined,
    hotWalletKeyFile: env.CRYPTO_HOT_WALLET_KEY_FILE || undefined,
    hotWalletKey,
    sandboxPayerKey: sandboxPayerKey
      ? ((sandboxPayerKey.startsWith('0x') ? sandboxPayerKey : `0x${sandboxPayerKey}`) as `0x${string}`)
      : undefined,
    timeoutMs: int(env.EVM_TIMEOUT_MS, 5_000, 'EVM_TIMEOUT_MS'),
  };
}

export const cryptoSettings: RailSettings<CryptoConfig> = {
  read: readCryptoConfig,
  // No secret in a variable: outside sandbox the hot wallet's key is read from a file (readCryptoConfig refuses
  // CRYPTO_HOT_WALLET_KEY there), and the deposit xpub is public by nature.
  sandboxOnlyValues: [],
  secrets: () => [],
};
