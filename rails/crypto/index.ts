// CRYPTO: stablecoins, no chain connector yet. A deposit shows a (sandbox) wallet address on the coin's network; an
// operator records the transfer the chain shows (`cambio payment record --rail CRYPTO`, the transaction hash as
// reference). A connector for a real chain replaces this folder's entry.
import { createHash } from 'node:crypto';
import type { RailEntry } from '../rail';

const RAIL = 'CRYPTO';

// Sandbox networks per stablecoin: where the deposit address lives.
const NETWORKS: Record<string, string> = { USDC: 'ETHEREUM', USDT: 'TRON', EURC: 'ETHEREUM', BRLT: 'POLYGON' };

export const cryptoRail: RailEntry = {
  rail: RAIL,
  slug: 'crypto',
  assets: ['USDC', 'USDT', 'EURC', 'BRLT'],
  transactionType: RAIL,
  recordedBy: 'operator',
  instruction: {
    summary: 'CRYPTO `network` and `walletAddress`',
    properties: { network: { type: 'string' }, walletAddress: { type: 'string' } },
  },
  fundingInstruction: (operationId, asset) => ({
    rail: RAIL,
    network: NETWORKS[asset] ?? 'ETHEREUM',
    walletAddress: `0x${createHash('sha256').update(`${operationId}:wallet`).digest('hex').slice(0, 40)}`,
  }),
  hasProvider: () => false,
};
