// The CRYPTO rail's connector: stablecoins as ERC-20 tokens on one EVM chain, read through viem. A deposit's
// "charge" is a fresh address (./addresses.ts) at which the payer sends exactly the quoted amount of the token; the
// node is asked first, so a deposit is never opened while the chain cannot be read (503). What arrives is found by
// the deposit scanner (activities/crypto-scan.ts), not by notices: a chain has no one to notify us.
import { type PublicClient } from 'viem';
import { CambioError } from '../../domain/errors';
import { firstLine, RailRejectedError, RailUnavailableError } from '../errors';
import type { ChargeCapability, ChargeCreated, ChargeRequest, RailConnector, RailStores } from '../rail';
import { depositAddress, parseDepositXpub } from './addresses';
import { amountToUnits, InexactAmountError, unitsToAmount } from './amounts';
import { type ChainInfo, type ChainToken, checkChain, evmPublicClient } from './chain';
import { type CryptoAsset, type CryptoConfig } from './config';
import { erc20Transfer } from './erc20-transfer';
import { CryptoPayouts } from './payouts';
import { transferReferenceParts } from './reference';
import { CryptoSandboxPayer } from './sandbox-payer';
import { hotWalletSigner } from './signer';
import { HotWalletTransfers } from './transfers';

export const CRYPTO_RAIL = 'CRYPTO';

/** A listed token's transfer as the chain shows it (`CryptoRail.transferOnChain`). */
export interface TransferOnChain {
  to: `0x${string}`;
  asset: CryptoAsset;
  /** At Cambio's scale; undefined when the transfer carries dust below it. */
  amount: string | undefined;
  confirmations: number;
}

export class CryptoRail implements RailConnector, ChargeCapability {
  readonly rail = CRYPTO_RAIL;
  readonly charges = this;
  /** Each charge takes a number from Postgres: the index of its deposit address. */
  readonly numbered = true;
  readonly client: PublicClient;
  /** Payouts and returns from the hot wallet: with its key, a store for its transfers and its nonces' writer only. */
  readonly payouts?: CryptoPayouts;
  readonly returns?: CryptoPayouts;
  /** In sandbox with EVM_SANDBOX_PAYER_KEY: real transfers to deposits from the sandbox's payer account. */
  readonly sandbox?: CryptoSandboxPayer;
  private info: Promise<ChainInfo> | undefined;

  constructor(
    readonly config: CryptoConfig,
    stores: RailStores = {},
  ) {
    this.client = evmPublicClient(config);
    const signer = hotWalletSigner(config);
    if (signer && stores.cryptoOutgoing && stores.cryptoNonces) {
      const chainId = async () => (await this.chain()).chainId;
      const { cryptoOutgoing: store, cryptoNonces: nonces } = stores;
      const transfers = new HotWalletTransfers(config, this.client, chainId, signer, store, nonces);
      const book = {
        token: (asset: string) => this.token(asset),
        tokens: async () => (await this.chain()).tokens,
        chainId,
        network: config.network,
      };
      const receipt = (hash: `0x${string}`) => this.client.getTransactionReceipt({ hash });
      this.payouts = this.returns = new CryptoPayouts(book, transfers, receipt);
    }
    if (config.sandboxPayerKey) this.sandbox = new CryptoSandboxPayer(this, config.sandboxPayerKey);
  }

  /**
   * The chain as checked at start (chain id, each token's decimals), read once; a node that was down is asked
   * again on the next call, a wrong chain or token keeps failing (ChainMismatchError).
   */
  chain(): Promise<ChainInfo> {
    if (!this.info) {
      this.info = checkChain(this.config, this.client);
      this.info.catch((err) => {
        if (err instanceof RailUnavailableError) this.info = undefined;
      });
    }
    return this.info;
  }

  /** The token of `asset` on the chain; RAIL_NOT_CONFIGURED when the deployment names no contract for it. */
  async token(asset: string): Promise<ChainToken> {
    const token = (await this.chain()).tokens.find((t) => t.asset === asset);
    if (!token) {
      throw new CambioError('RAIL_NOT_CONFIGURED', `${asset} has no contract on the CRYPTO rail (EVM_TOKEN_${asset})`, {
        rail: CRYPTO_RAIL,
      });
    }
    return token;
  }

  /**
   * The deposit's address and token. `request.sequence` is the address index Postgres gave this charge; `asset`
   * the stablecoin paid in. RailUnavailableError when the node does not answer (the API answers 503).
   */
  async createCharge(request: ChargeRequest): Promise<ChargeCreated> {
    if (request.sequence === undefined) throw new Error('a CRYPTO charge needs its address index (sequence)');
    if (!this.config.depositXpub) {
      throw new CambioError('RAIL_NOT_CONFIGURED', 'CRYPTO_DEPOSIT_XPUB is unset: no deposit address can be given', {
        rail: CRYPTO_RAIL,
      });
    }
    const token = await this.token(request.asset ?? '');
    // The node must answer now: a deposit whose payments could not be seen is not opened.
    let head: bigint;
    try {
      head = await this.client.getBlockNumber({ cacheTime: 0 });
    } catch (err) {
      throw new RailUnavailableError(`the EVM node does not answer: ${firstLine(err)}`);
    }
    // The quote's amount in token units, exactly (a 2-decimal token cannot be asked for 1.000001).
    try {
      amountToUnits(request.amount, token.decimals);
    } catch (err) {
      if (!(err instanceof InexactAmountError)) throw err;
      throw new RailRejectedError(
        `${token.asset} on this chain cannot carry ${request.amount}: ${err.message}`,
        422,
        {},
      );
    }
    const walletAddress = depositAddress(parseDepositXpub(this.config.depositXpub), request.sequence);
    const expiresAt = new Date(Date.now() + request.expiresInSeconds * 1000).toISOString();
    // Paid only once shown, so after this head; EVM_CONFIRMATIONS below it leaves room for a node behind another.
    const depth = BigInt(this.config.confirmations);
    const { chainId } = await this.chain();
    return {
      chargeId: walletAddress,
      scanFrom: { chainId, block: String(head > depth ? head - depth : 0n) },
      expiresAt,
      fundingInstruction: {
        rail: CRYPTO_RAIL,
        network: this.config.network,
        asset: token.asset,
        walletAddress,
        tokenContract: token.address,
        amount: request.amount,
        expiresAt,
      },
    };
  }

  /**
   * The transfer `endToEndId` (in the scanner's form) as this chain shows it: the address it paid, its token's asset,
   * its amount at Cambio's scale (undefined when it carries dust below it) and how many blocks deep it is (its own
   * counted); undefined when it is not of that form, names another chain, a transaction the node has no receipt of,
   * or a log that is not a listed token's ERC-20 Transfer. RailUnavailableError when the node does not answer.
   */
  async transferOnChain(endToEndId: string): Promise<TransferOnChain | undefined> {
    const ref = transferReferenceParts(endToEndId);
    if (!ref) return undefined;
    const { chainId, tokens } = await this.chain();
    if (ref.chainId !== chainId) return undefined;
    const receipt = await this.client.getTransactionReceipt({ hash: ref.hash }).catch((err: Error) => {
      if (err.name === 'TransactionReceiptNotFoundError') return undefined;
      throw new RailUnavailableError(`the EVM node does not answer: ${firstLine(err)}`);
    });
    const log = receipt?.logs.find((l) => l.logIndex === ref.logIndex);
    const token = log && tokens.find((t) => t.address.toLowerCase() === log.address.toLowerCase());
    const transfer = token && erc20Transfer(log);
    if (!transfer) return undefined;
    const head = await this.client.getBlockNumber({ cacheTime: 0 }).catch((err: Error) => {
      throw new RailUnavailableError(`the EVM node does not answer: ${firstLine(err)}`);
    });
    let amount: string | undefined;
    try {
      amount = unitsToAmount(transfer.value, token.decimals);
    } catch (err) {
      if (!(err instanceof InexactAmountError)) throw err;
    }
    return {
      to: transfer.to,
      asset: token.asset,
      amount,
      confirmations: Math.max(0, Number(head - receipt!.blockNumber + 1n)),
    };
  }
}

export const isCryptoAsset = (asset: string): asset is CryptoAsset => ['USDC', 'USDT', 'EURC', 'BRLT'].includes(asset);
