// A real local EVM chain for a test file: anvil (sandbox-chain/anvil.ts) on a free port with the chain id asked
// for, the four 6-decimal test stablecoins deployed, the payers and the hot wallet funded, and the sandbox xpub.
// Tests drive it as a payer would (token transfers) and as a chain does (mining, reorganising).
import { createTestClient, http, parseUnits } from 'viem';
import {
  HOT_WALLET_INDEX,
  PAYER_INDICES,
  sandboxAccount,
  sandboxDepositKey,
  sandboxDepositXpub,
  sandboxHotWalletKey,
  SANDBOX_PAYER_INDEX,
  sandboxPayerKey,
} from '../../sandbox-chain/accounts';
import { type AnvilProcess, startAnvil } from '../../sandbox-chain/anvil';
import {
  type ChainClients,
  chainClients,
  chainEnv,
  deploySandboxTokens,
  deployToken,
  fundSandboxPayer,
  mint,
  SANDBOX_TOKEN_ABI,
  type SandboxTokens,
} from '../../sandbox-chain/tokens';

export { sandboxDepositKey };

export interface TestChain {
  url: string;
  chainId: number;
  tokens: SandboxTokens;
  clients: ChainClients;
  xpub: string;
  hotWallet: { address: `0x${string}`; key: `0x${string}` };
  payers: `0x${string}`[];
  /** The sandbox route's payer (EVM_SANDBOX_PAYER_KEY, which `env` leaves out: pass it to a sandbox process). */
  sandboxPayer: { address: `0x${string}`; key: `0x${string}` };
  /** What Cambio's processes need to use this chain (EVM_*, CRYPTO_DEPOSIT_XPUB, CRYPTO_HOT_WALLET_KEY). */
  env(extra?: Record<string, string>): Record<string, string>;
  blockNumber(): Promise<bigint>;
  /** Mines `n` empty blocks at once. */
  mine(n: number): Promise<void>;
  /**
   * Sends `amount` (a decimal string of whole tokens, or units as a bigint) of `token` (an asset's name or a
   * contract) from payer `from` (an index into `payers`, default 0) to `to`; resolves with its hash once mined.
   */
  transfer(args: {
    token: string;
    to: `0x${string}`;
    amount: string | bigint;
    from?: number;
    decimals?: number;
  }): Promise<`0x${string}`>;
  /**
   * Replaces the last `depth` blocks with as many empty ones (`anvil_reorg`): their transactions are gone, but for
   * those of `include`, each mined again (its signed bytes) in the new block `offset` blocks after the first replaced.
   */
  reorg(depth: number, include?: { hash: `0x${string}`; offset: number }[]): Promise<void>;
  /** Deploys another SandboxToken (say with 18 decimals) and funds the payers with it. */
  deployToken(symbol: string, decimals: number): Promise<`0x${string}`>;
  stop(): Promise<void>;
}

export async function startChain(options: { chainId?: number } = {}): Promise<TestChain> {
  const chainId = options.chainId ?? 31337;
  const anvil: AnvilProcess = await startAnvil({ chainId });
  const clients = chainClients(anvil.url, chainId);
  const tokens = await deploySandboxTokens(clients);
  await fundSandboxPayer(clients, tokens);
  const test = createTestClient({ mode: 'anvil', transport: http(anvil.url, { retryCount: 0 }) });
  const payers = PAYER_INDICES.map((i) => sandboxAccount(i).address);
  const hotWallet = { address: sandboxAccount(HOT_WALLET_INDEX).address, key: sandboxHotWalletKey() };
  const xpub = sandboxDepositXpub();
  const tokenAddress = (token: string) =>
    (token.startsWith('0x') ? token : tokens[token as keyof SandboxTokens]) as `0x${string}`;
  return {
    url: anvil.url,
    chainId,
    tokens,
    clients,
    xpub,
    hotWallet,
    payers,
    sandboxPayer: { address: sandboxAccount(SANDBOX_PAYER_INDEX).address, key: sandboxPayerKey() },
    env: (extra = {}) => ({
      ...chainEnv(anvil.url, chainId, tokens),
      CRYPTO_DEPOSIT_XPUB: xpub,
      CRYPTO_HOT_WALLET_KEY: hotWallet.key,
      ...extra,
    }),
    blockNumber: () => clients.public.getBlockNumber({ cacheTime: 0 }),
    mine: (n) => test.mine({ blocks: n }),
    async transfer({ token, to, amount, from = 0, decimals = 6 }) {
      const account = sandboxAccount(PAYER_INDICES[from]);
      const value = typeof amount === 'bigint' ? amount : parseUnits(amount, decimals);
      const hash = await clients.wallet.writeContract({
        address: tokenAddress(token),
        abi: SANDBOX_TOKEN_ABI,
        functionName: 'transfer',
        args: [to, value],
        account,
        chain: clients.wallet.chain,
      });
      await clients.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      return hash;
    },
    async reorg(depth, include = []) {
      const pairs = [];
      for (const { hash, offset } of include) {
        const raw = await test.request({ method: 'eth_getRawTransactionByHash', params: [hash] } as never);
        pairs.push([raw, offset]);
      }
      await test.request({ method: 'anvil_reorg', params: [depth, pairs] } as never);
    },
    async deployToken(symbol, decimals) {
      const address = await deployToken(clients, symbol, decimals);
      for (const to of payers) await mint(clients, address, to, parseUnits('1000000', decimals));
      return address;
    },
    stop: () => anvil.stop(),
  };
}
