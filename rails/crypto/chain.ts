// The EVM node, through viem: one public client per process, and what is checked when a process starts with it —
// the node's chain id is EVM_CHAIN_ID (a node of another chain would credit transfers that never happened on ours),
// and each configured token's `decimals()` is read (amounts convert by it; ./amounts.ts).
import {
  BaseError,
  createPublicClient,
  erc20Abi,
  http,
  HttpRequestError,
  TimeoutError,
  WebSocketRequestError,
  type PublicClient,
} from 'viem';
import { firstLine, RailUnavailableError } from '../errors';
import { CRYPTO_ASSETS, type CryptoAsset, type CryptoConfig } from './config';

/** A public client of the configured node (reads only; signing is the hot wallet's, behind its signer). */
export function evmPublicClient(config: CryptoConfig): PublicClient {
  if (!config.rpcUrl) throw new Error('EVM_RPC_URL is unset: no CRYPTO rail');
  return createPublicClient({
    transport: http(config.rpcUrl, { timeout: config.timeoutMs, retryCount: 0 }),
  });
}

/** A configured stablecoin as the chain showed it at start. */
export interface ChainToken {
  asset: CryptoAsset;
  address: `0x${string}`;
  decimals: number;
}

/** The chain as it answered at start: its id and the tokens on it. */
export interface ChainInfo {
  chainId: number;
  tokens: ChainToken[];
}

/** The chain is not the one configured, or a token is not what Cambio can hold: the process does not start. */
export class ChainMismatchError extends Error {
  override readonly name = 'ChainMismatchError';
}

/**
 * Reads `eth_chainId` and each token's `decimals()`. ChainMismatchError when the id is not EVM_CHAIN_ID or a
 * contract answers no `decimals()`; RailUnavailableError when the node cannot be reached.
 */
export async function checkChain(config: CryptoConfig, client = evmPublicClient(config)): Promise<ChainInfo> {
  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (err) {
    throw new RailUnavailableError(`the EVM node at EVM_RPC_URL does not answer: ${(err as Error).message}`);
  }
  if (chainId !== config.chainId) {
    throw new ChainMismatchError(
      `the EVM node at EVM_RPC_URL is chain ${chainId}, not EVM_CHAIN_ID=${config.chainId}: refusing to read it`,
    );
  }
  const tokens: ChainToken[] = [];
  for (const asset of CRYPTO_ASSETS) {
    const address = config.tokens[asset];
    if (!address) continue;
    let decimals: number;
    try {
      decimals = await client.readContract({ address, abi: erc20Abi, functionName: 'decimals' });
    } catch (err) {
      // The node not answering this call is an outage, retried on the next call (connector.ts drops a failed read
      // only when it is one); a contract that answers no decimals() is a wrong setting, kept until a restart.
      if (notAnswered(err)) {
        throw new RailUnavailableError(`the EVM node did not answer ${asset}'s decimals(): ${firstLine(err)}`);
      }
      throw new ChainMismatchError(
        `EVM_TOKEN_${asset}=${address} answers no ERC-20 decimals() on chain ${chainId}: ${firstLine(err)}`,
      );
    }
    tokens.push({ asset, address, decimals });
  }
  return { chainId, tokens };
}

/** A call the node did not answer (unreachable, timed out, an HTTP error status), not one a contract refused. */
const notAnswered = (err: unknown): boolean =>
  err instanceof BaseError &&
  err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError || e instanceof WebSocketRequestError) !==
    null;
