// The sandbox's stablecoins on a local chain: SandboxToken (token/SandboxToken.sol, compiled by `npm run
// build:tokens` into token/SandboxToken.json) deployed once per coin, and minted to the payers and the hot wallet.
import {
  type Abi,
  createTestClient,
  erc20Abi,
  type Account,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  parseUnits,
  type PublicClient,
  type WalletClient,
} from 'viem';
import artifact from './token/SandboxToken.json';
import { DEPLOYER_INDEX, HOT_WALLET_INDEX, PAYER_INDICES, SANDBOX_PAYER_INDEX, sandboxAccount } from './accounts';

export const SANDBOX_TOKEN_ABI = artifact.abi as Abi;
const BYTECODE = artifact.bytecode as Hex;

export const SANDBOX_ASSETS = ['USDC', 'USDT', 'EURC', 'BRLT'] as const;

/** Tokens minted to each payer and to the hot wallet: plenty for a day of sandbox deposits and payouts. */
export const FUNDING_AMOUNT = '1000000000';

/** A chain to talk to: its clients and the account that deploys and mints. */
export interface ChainClients {
  url: string;
  chainId: number;
  public: PublicClient;
  wallet: WalletClient;
  deployer: Account;
}

export function chainClients(url: string, chainId: number): ChainClients {
  const chain = {
    id: chainId,
    name: 'sandbox',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  };
  const transport = http(url, { retryCount: 0 });
  const deployer = sandboxAccount(DEPLOYER_INDEX);
  return {
    url,
    chainId,
    public: createPublicClient({ chain, transport }),
    wallet: createWalletClient({ chain, transport, account: deployer }),
    deployer,
  };
}

/** Deploys one SandboxToken and waits for it; its address. */
export async function deployToken(c: ChainClients, symbol: string, decimals = 6): Promise<`0x${string}`> {
  const hash = await c.wallet.deployContract({
    abi: SANDBOX_TOKEN_ABI,
    bytecode: BYTECODE,
    args: [`Sandbox ${symbol}`, symbol, decimals],
    account: c.deployer,
    chain: c.wallet.chain,
  });
  const receipt = await c.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (!receipt.contractAddress) throw new Error(`deploying ${symbol} created no contract`);
  return receipt.contractAddress;
}

/** Mints `amount` (in whole tokens, a decimal string) of `token` to `to`, and waits for it. */
export async function mint(c: ChainClients, token: `0x${string}`, to: `0x${string}`, units: bigint): Promise<void> {
  const hash = await c.wallet.writeContract({
    address: token,
    abi: SANDBOX_TOKEN_ABI,
    functionName: 'mint',
    args: [to, units],
    account: c.deployer,
    chain: c.wallet.chain,
  });
  await c.public.waitForTransactionReceipt({ hash, pollingInterval: 50 });
}

export type SandboxTokens = Record<(typeof SANDBOX_ASSETS)[number], `0x${string}`>;

/** The four 6-decimal stablecoins, deployed, with the payers and the hot wallet funded. */
export async function deploySandboxTokens(c: ChainClients): Promise<SandboxTokens> {
  const tokens = {} as SandboxTokens;
  for (const asset of SANDBOX_ASSETS) tokens[asset] = await deployToken(c, asset);
  const holders = [...PAYER_INDICES, HOT_WALLET_INDEX].map((i) => sandboxAccount(i).address);
  const units = parseUnits(FUNDING_AMOUNT, 6);
  for (const token of Object.values(tokens)) for (const to of holders) await mint(c, token, to, units);
  return tokens;
}

/**
 * Gives the sandbox payer (an account past anvil's ten funded ones) ether for gas and each token, unless it holds
 * some already: a chain kept in a state file from before it had a payer gets one on its next start.
 */
export async function fundSandboxPayer(c: ChainClients, tokens: SandboxTokens): Promise<void> {
  const payer = sandboxAccount(SANDBOX_PAYER_INDEX).address;
  if ((await c.public.getBalance({ address: payer })) === 0n) {
    const test = createTestClient({ mode: 'anvil', transport: http(c.url, { retryCount: 0 }) });
    await test.setBalance({ address: payer, value: parseUnits('10000', 18) });
  }
  const units = parseUnits(FUNDING_AMOUNT, 6);
  for (const token of Object.values(tokens)) {
    const held = await c.public.readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [payer],
    });
    if (held === 0n) await mint(c, token, payer, units);
  }
}

/** The settings that point Cambio at this chain (EVM_*), as environment variables. */
export function chainEnv(url: string, chainId: number, tokens: SandboxTokens): Record<string, string> {
  return {
    EVM_RPC_URL: url,
    EVM_CHAIN_ID: String(chainId),
    EVM_TOKEN_USDC: tokens.USDC,
    EVM_TOKEN_USDT: tokens.USDT,
    EVM_TOKEN_EURC: tokens.EURC,
    EVM_TOKEN_BRLT: tokens.BRLT,
  };
}
