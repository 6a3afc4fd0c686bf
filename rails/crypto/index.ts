// CRYPTO: USDC, USDT, EURC and BRLT as ERC-20 tokens on one EVM chain (../shared/spec/decisions.md, "Crypto:
// stablecoins on a real chain (EVM)"). With EVM_RPC_URL the connector gives each deposit a fresh address and the
// deposit scanner records what the chain shows; without it, outside sandbox, a CRYPTO deposit is 422
// RAIL_NOT_CONFIGURED. An operator may still record a transfer the chain shows (`cambio payment record --rail
// CRYPTO`, decision 0130).
import { getAddress } from 'viem';
import { createHash } from 'node:crypto';
import type { Config } from '../../config';
import type { RailEntry, RailStores } from '../rail';
import { CRYPTO_RAIL, CryptoRail } from './connector';
import { canonicalTransferReference } from './reference';
import type { CryptoAsset } from './config';

export { CryptoRail, CRYPTO_RAIL } from './connector';

/** The CRYPTO rail of this deployment, or undefined when no node is configured (EVM_RPC_URL unset). */
export const cryptoRailFromConfig = (config: Config, stores: RailStores = {}): CryptoRail | undefined =>
  config.crypto.rpcUrl ? new CryptoRail(config.crypto, stores) : undefined;

/** A checksummed address derived from `seed`: the sandbox's stand-in where no chain gives one. */
const standInAddress = (seed: string) =>
  getAddress(`0x${createHash('sha256').update(seed).digest('hex').slice(0, 40)}`);

export const cryptoRail: RailEntry = {
  rail: CRYPTO_RAIL,
  slug: 'crypto',
  assets: ['USDC', 'USDT', 'EURC', 'BRLT'],
  transactionType: CRYPTO_RAIL,
  recordedBy: 'operator',
  // Recorded by the scanner (or an operator), but sent back by the connector from the hot wallet (decision 0136).
  returnedBy: 'provider',
  // The scanner's `{chainId}:{txHash}:{logIndex}`, however an operator typed it (decision 0222).
  reference: canonicalTransferReference,
  providerSetting: 'EVM_RPC_URL',
  instruction: {
    summary:
      'CRYPTO on an EVM chain: send exactly `amount` of the ERC-20 `tokenContract` (`asset`) on `network` to ' +
      "`walletAddress`, this deposit's own address, before `expiresAt`",
    properties: {
      network: { type: 'string', description: 'CRYPTO: the chain (CRYPTO_NETWORK, e.g. ETHEREUM)' },
      asset: { type: 'string', description: 'CRYPTO: the stablecoin to send (USDC, USDT, EURC, BRLT)' },
      walletAddress: {
        type: 'string',
        pattern: '^0x[0-9a-fA-F]{40}$',
        description: "CRYPTO: the deposit's own address (EIP-55 checksummed), derived for this deposit alone",
      },
      tokenContract: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$', description: "CRYPTO: the token's contract" },
      amount: {
        type: 'string',
        description: "CRYPTO: exactly what to send, in the token's units (the quote's source)",
      },
    },
  },
  // Without a node (sandbox without a chain): stand-in addresses, shown checksummed, in the shape the connector's
  // instruction has (the configured network, the token's contract when configured); only the sandbox route or an
  // operator records payments then.
  fundingInstruction: (operationId, asset, dueDate, deposit) => ({
    rail: CRYPTO_RAIL,
    network: deposit?.config.crypto.network ?? 'ETHEREUM',
    asset,
    walletAddress: standInAddress(`${operationId}:wallet`),
    tokenContract: deposit?.config.crypto.tokens[asset as CryptoAsset] ?? standInAddress(`${asset}:token`),
    ...(deposit?.amount ? { amount: deposit.amount } : {}),
    expiresAt: dueDate.toISOString(),
  }),
  hasProvider: (config) => !!config.crypto.rpcUrl,
  // A transfer mined in the window is seen by a scan and confirmed EVM_CONFIRMATIONS blocks later, perhaps after the
  // window: the deposit waits that long, and two scans more for one that fails. A transfer first seen after the
  // window takes nothing of it (`paidAfterWindow`), so the wait takes nothing paid late (decision 0322). Without a
  // node, no transfer is seen at all, and nothing arrives late.
  lateArrivalSeconds: ({ crypto }) =>
    crypto.rpcUrl ? crypto.confirmations * crypto.blockSeconds + 2 * crypto.scanEverySeconds : 0,
  // The scanner records a transfer when it first sees it, never before it was mined: one recorded before the window's
  // end was paid within it. One recorded after may have been mined just before the end and seen late; it is
  // UNMATCHED all the same, as before this rule: the record is the only instant Cambio holds (decision 0322).
  paidAfterWindow: (payment, windowEnd) => payment.createdAt > windowEnd,
  // Not a listing of a provider's: the deposit scanner reads the chain itself (payments/crypto-scan.ts).
  reconciliation: {
    everySeconds: (config) => config.crypto.scanEverySeconds,
    from: () => undefined,
    note: (config) =>
      "Reads the CRYPTO tokens' Transfer logs into deposits and confirms them " +
      `(EVM_SCAN_EVERY_SECONDS=${config.crypto.scanEverySeconds}, EVM_CONFIRMATIONS=${config.crypto.confirmations})`,
    workflowType: 'cryptoScanWorkflow',
  },
  // A WALLET payout needs the node and the hot wallet's key (docs/decisions/0134), and a contract for its stablecoin:
  // without one nothing could ever pay it, and it would wait PROCESSING with its money held (decision 0209).
  canPayOut: (config, asset) =>
    !!config.crypto.rpcUrl &&
    !!(config.crypto.hotWalletKeyFile || config.crypto.hotWalletKey) &&
    !!config.crypto.tokens[asset as CryptoAsset],
  connector: cryptoRailFromConfig,
};
