// At the start of the API and the worker: a deployment pointed at the wrong chain (EVM_CHAIN_ID is not what the node
// answers) or at a contract that is no ERC-20 does not start, with a message naming the setting. A node that does
// not answer yet is no reason to stay down: deposits answer 503 and the scanner retries until it does.
import type { Config } from '../../config';
import { RailUnavailableError } from '../errors';
import { checkChain, type ChainInfo } from './chain';

/** The chain as checked, undefined without EVM_RPC_URL or while the node is down; throws on a wrong chain. */
export async function checkChainAtStart(
  config: Config,
  warn: (message: string) => void,
): Promise<ChainInfo | undefined> {
  if (!config.crypto.rpcUrl) return undefined;
  try {
    return await checkChain(config.crypto);
  } catch (err) {
    if (err instanceof RailUnavailableError) {
      warn(`CRYPTO rail: ${err.message}; deposits answer 503 until it does`);
      return undefined;
    }
    throw err;
  }
}

/** As checkChainAtStart, but a wrong chain ends the process: the message on stderr and exit 1. */
export async function exitOnWrongChain(processName: string, config: Config, warn: (m: string) => void) {
  try {
    await checkChainAtStart(config, warn);
  } catch (err) {
    console.error(`The ${processName} does not start: ${(err as Error).message}`);
    process.exit(1);
  }
}
