// ERC-20 transfers out of the hot wallet, for payouts and returns alike (docs/decisions/0142). One transfer per
// id of ours, whatever the retries, crashes and reorgs:
//   1. funds first: the wallet's token balance must cover this amount and every transfer not final yet, and its
//      ether the gas of all of them; short, nothing is reserved and the answer is PENDING (the caller reads again
//      later: the payout stays PROCESSING until someone funds the wallet, never FAILED). The nonce writer checks the
//      same funds again under its lock, so two transfers that each fit alone do not both go (decision 0221);
//   2. a nonce from the wallet's single writer (NonceWriter: its workflow, which gives it in Postgres under the
//      wallet's row lock): consecutive, never twice, the same one again for an id that has one;
//   3. signed (TransactionSigner) and the raw bytes and hash stored before anything is broadcast;
//   4. broadcast, and every later read that finds no receipt broadcasts the same bytes again (a node that lost it,
//      a reorg that dropped it): the same bytes are the same transaction, mined at most once.
// COMPLETED once the receipt's block has EVM_CONFIRMATIONS and is still the chain's block at that height; a
// reverted receipt is FAILED (the nonce is spent, nothing moved) under the same two rules, PENDING until then
// (docs/decisions/0160): a reorg that drops its block can mine the same bytes again, and there they may succeed.
// Bytes the node refuses whose nonce another transaction used EVM_CONFIRMATIONS deep (an operator's cancel or
// speed-up) are never mined: that transaction's effect is the answer (./taken-nonce.ts, docs/decisions/0294).
import { encodeFunctionData, erc20Abi, getAddress, keccak256, type Hex } from 'viem';
import type { CryptoConfig } from './config';
import type { ChainToken } from './chain';
import { type NonceWriter, type WalletFunds, WalletShortError } from './nonce-writer';
import type { OutgoingTx, OutgoingTxStore } from './outgoing-store';
import { takenNonceState } from './taken-nonce';
import type { TransferState } from './transfer-state';
import type { TransactionSigner } from './signer';
import type { PublicClient } from 'viem';

/** What an ERC-20 `transfer` may burn at most: about twice what common stablecoins take (USDT: ~63k). */
export const TRANSFER_GAS_LIMIT = 120_000n;

// In a file of its own, so that ./taken-nonce.ts, which this file calls, can name it without importing this one.
export type { TransferState, TransferStatus } from './transfer-state';

export interface TransferOrder {
  id: string;
  token: ChainToken;
  to: `0x${string}`;
  units: bigint;
}

export class HotWalletTransfers {
  constructor(
    private readonly config: CryptoConfig,
    private readonly client: PublicClient,
    private readonly chainId: () => Promise<number>,
    private readonly signer: TransactionSigner,
    private readonly store: OutgoingTxStore,
    private readonly nonces: NonceWriter,
  ) {}

  get wallet(): `0x${string}` {
    return this.signer.address;
  }

  /** Sends the transfer of `order.id`, or follows the one sent before under that id. */
  async send(order: TransferOrder): Promise<TransferState> {
    let row = await this.store.find(order.id);
    if (!row) {
      const chainId = await this.chainId();
      const { short, funds } = await this.shortfall(chainId, order);
      if (short) return { status: 'PENDING', reason: short };
      const chainNonce = await this.client.getTransactionCount({ address: this.wallet, blockTag: 'pending' });
      const tx = {
        id: order.id,
        chainId,
        wallet: this.wallet,
        token: order.token.address,
        recipient: getAddress(order.to),
        units: order.units.toString(),
      };
      // The writer checks the funds again, under its lock, against the transfers given a nonce meanwhile.
      try {
        row = await this.nonces.nonceFor(tx, chainNonce, funds);
      } catch (err) {
        if (err instanceof WalletShortError) return { status: 'PENDING', reason: err.message };
        throw err;
      }
    }
    return this.follow(row);
  }

  /**
   * A first send of `id` refused for good (`reason`): recorded so that no nonce is ever given it, a request of an
   * earlier attempt still waiting at the nonce writer included (decision 0344). Undefined once recorded; the
   * transfer's state when that request was given its nonce first (it is then followed, not refused).
   */
  async refuseUnlessOrdered(id: string, reason: string): Promise<TransferState | undefined> {
    const given = await this.store.refuseUnordered(id, reason);
    return given ? this.follow(given) : undefined;
  }

  /** Whether a transfer was ever ordered under `id` (a nonce given): from then on it is followed, never refused. */
  async ordered(id: string): Promise<boolean> {
    return (await this.store.find(id)) !== undefined;
  }

  /** The transfer of `id` read again (and broadcast again while the chain has no receipt); undefined: never sent. */
  async status(id: string): Promise<TransferState | undefined> {
    const row = await this.store.find(id);
    return row ? this.follow(row) : undefined;
  }

  private async follow(stored: OutgoingTx): Promise<TransferState> {
    const row = stored.raw ? stored : await this.sign(stored);
    const hash = row.hash as `0x${string}`;
    const receipt = await this.client.getTransactionReceipt({ hash }).catch((err: Error) => {
      if (err.name === 'TransactionReceiptNotFoundError') return undefined;
      throw err;
    });
    if (!receipt) {
      const sent = await this.broadcast(row.raw as Hex);
      if (sent) return { status: 'PENDING', hash, nonce: row.nonce };
      // Refused: the nonce may be used by a transaction not ours (an operator's cancel or speed-up, decision 0294).
      const taken = await takenNonceState(this.client, row, this.config.confirmations);
      if (!taken) return { status: 'PENDING', hash, nonce: row.nonce, reason: 'the node did not take it yet' };
      if (taken.status !== 'PENDING') await this.store.markFinal(row.id);
      return taken;
    }
    // A revert is final under the rules of a success (above), since FAILED releases the payout's hold: it hung on
    // the chain's state (the wallet's balance, the order in the block), and the same bytes re-mined may succeed.
    const reverted = receipt.status === 'reverted';
    const waiting: TransferState = { status: 'PENDING', hash, nonce: row.nonce };
    if (reverted) waiting.reason = `reverted, waiting for ${this.config.confirmations} confirmations`;
    const head = await this.client.getBlockNumber({ cacheTime: 0 });
    if (head - receipt.blockNumber + 1n < BigInt(this.config.confirmations)) return waiting;
    // The receipt's block must still be the chain's at that height: a reorg under way answers PENDING, read again.
    const block = await this.client.getBlock({ blockNumber: receipt.blockNumber });
    if (block.hash !== receipt.blockHash) return waiting;
    await this.store.markFinal(row.id);
    if (!reverted) return { status: 'COMPLETED', hash, nonce: row.nonce };
    return { status: 'FAILED', hash, nonce: row.nonce, reason: 'the token contract reverted the transfer' };
  }

  /** Signs the reserved transfer and stores the bytes before any broadcast (a concurrent attempt's stay if first). */
  private async sign(row: OutgoingTx): Promise<OutgoingTx> {
    const fees = await this.client.estimateFeesPerGas();
    const raw = await this.signer.signTransaction({
      type: 'eip1559',
      chainId: row.chainId,
      nonce: row.nonce,
      to: row.token as `0x${string}`,
      value: 0n,
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: 'transfer',
        args: [row.recipient as `0x${string}`, BigInt(row.units)],
      }),
      gas: TRANSFER_GAS_LIMIT,
      maxFeePerGas: fees.maxFeePerGas,
      maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    });
    return this.store.storeSigned(row.id, raw, keccak256(raw));
  }

  /**
   * Sends the stored bytes: true when the node took them or says it has them already. A refusal is not final: the
   * next read sends them again. "Nonce too low" is one too: this very transaction mined meanwhile (its receipt comes
   * on the next read), or another transaction on its nonce (the caller looks, decision 0294).
   */
  private async broadcast(raw: Hex): Promise<boolean> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
      return true;
    } catch (err) {
      return (err as Error).message.toLowerCase().includes('already known');
    }
  }

  /**
   * Why the wallet cannot pay `order` now (with every transfer not final yet), or undefined when it can; and the
   * funds read, which the nonce writer checks again against the transfers given a nonce since (decision 0221).
   */
  private async shortfall(chainId: number, order: TransferOrder): Promise<{ short?: string; funds: WalletFunds }> {
    const [tokens, ether, open, fees] = await Promise.all([
      this.client.readContract({
        address: order.token.address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [this.wallet],
      }),
      this.client.getBalance({ address: this.wallet }),
      this.store.open(chainId, this.wallet, order.token.address),
      this.client.estimateFeesPerGas(),
    ]);
    const gasPerTransfer = TRANSFER_GAS_LIMIT * fees.maxFeePerGas;
    const funds = { tokens: tokens.toString(), ether: ether.toString(), gasPerTransfer: gasPerTransfer.toString() };
    if (tokens < BigInt(open.units) + order.units) {
      const held = `the hot wallet holds ${tokens} base units of ${order.token.asset}`;
      return { short: `${held}, short of ${order.units} more after ${open.units} committed`, funds };
    }
    const gas = BigInt(open.transfers + 1) * gasPerTransfer;
    if (ether < gas) {
      return { short: `the hot wallet holds ${ether} wei, short of the gas of ${open.transfers + 1} transfers`, funds };
    }
    return { funds };
  }
}
