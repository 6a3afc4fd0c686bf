// The sandbox's payer for CRYPTO deposits (decision 0140): a real ERC-20 `transfer` of the deposit's token to its
// address on the local chain, from a funded development account of the sandbox (EVM_SANDBOX_PAYER_KEY; never the hot
// wallet, whose nonces belong to payouts), then EVM_CONFIRMATIONS blocks mined (`anvil_mine`): the chain scan finds,
// confirms and credits it exactly as it would a customer's transfer.
import {
  concatHex,
  createTestClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  keccak256,
  parseEventLogs,
  type PublicClient,
  toHex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { CambioError } from '../../domain/errors';
import { parseAmountValue } from '../../domain/money';
import { firstLine, RailUnavailableError } from '../errors';
import type { SandboxPaid, SandboxPayerCapability, SandboxPaymentRequest } from '../rail';
import { amountToUnits, InexactAmountError } from './amounts';
import type { ChainInfo, ChainToken } from './chain';
import { CRYPTO_ASSETS, type CryptoAsset, type CryptoConfig } from './config';

export interface SandboxTransfer {
  token: `0x${string}`;
  to: `0x${string}`;
  units: bigint;
  /**
   * 32 bytes from the request's id, appended to the transfer's calldata (the token's ABI decoder ignores them): the
   * transfer a retry finds on the chain instead of sending another.
   */
  tag: Hex;
}

/** What the payer reads of the CRYPTO connector (./connector.ts): its node, settings and the chain it checked. */
export interface PayerRail {
  readonly rail: string;
  readonly client: PublicClient;
  readonly config: CryptoConfig;
  chain(): Promise<ChainInfo>;
  token(asset: string): Promise<ChainToken>;
}

const TRANSFER_EVENT = erc20Abi.find((e) => e.type === 'event' && e.name === 'Transfer')!;

export class CryptoSandboxPayer implements SandboxPayerCapability<SandboxTransfer> {
  private readonly account;
  // One transfer at a time from this process: each takes the payer's next nonce.
  private sending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly rail: PayerRail,
    key: `0x${string}`,
  ) {
    this.account = privateKeyToAccount(key);
  }

  /**
   * The transfer for a deposit's address, of the body's token (another token than the deposit's is sent too, and
   * lands in the suspense as it would), in the token's units exactly: dust below them is the request's 422.
   */
  async payment(request: SandboxPaymentRequest): Promise<SandboxTransfer | undefined> {
    const to = request.fundingInstruction.walletAddress;
    if (typeof to !== 'string' || !(CRYPTO_ASSETS as readonly string[]).includes(request.asset)) return undefined;
    const asset = request.asset as CryptoAsset;
    const amount = parseAmountValue(request.amount, asset, { path: '/amount/value' });
    if (amount.lte(0)) {
      throw new CambioError('INVALID_AMOUNT', '/amount/value must be above zero', { path: '/amount/value' });
    }
    const token = await this.chainCall(() => this.rail.token(asset));
    let units: bigint;
    try {
      units = amountToUnits(request.amount, token.decimals);
    } catch (err) {
      if (!(err instanceof InexactAmountError)) throw err;
      const message = `/amount/value: ${token.asset} on this chain cannot carry ${request.amount} (${err.message})`;
      throw new CambioError('INVALID_AMOUNT_PRECISION', message, { path: '/amount/value' });
    }
    const tag = keccak256(toHex(`cambio-sandbox-payment:${request.paymentId}`));
    return { token: token.address, to: getAddress(to), units, tag };
  }

  /** Sends the transfer unless the chain holds it already, and mines it EVM_CONFIRMATIONS deep. */
  async pay(transfer: SandboxTransfer): Promise<SandboxPaid> {
    const { chainId } = await this.chainCall(() => this.rail.chain());
    const hash = (await this.chainCall(() => this.sent(transfer))) ?? (await this.firstSend(transfer, chainId));
    const receipt = await this.chainCall(() =>
      this.rail.client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: this.rail.config.timeoutMs }),
    );
    if (receipt.status !== 'success') {
      throw new CambioError('RAIL_REJECTED', `the sandbox payer's transfer ${hash} reverted (is it funded?)`, {
        rail: this.rail.rail,
      });
    }
    const [log] = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs }).filter(
      (l) => l.address.toLowerCase() === transfer.token.toLowerCase(),
    );
    if (!log) throw new Error(`the transfer ${hash} emitted no Transfer event of ${transfer.token}`);
    await this.chainCall(() => this.mineConfirmations(receipt.blockNumber));
    return {
      reference: `${chainId}:${log.transactionHash}:${log.logIndex}`,
      learnedBy: 'reconciliation',
      notYet: 'the chain scan has not recorded the transfer yet',
    };
  }

  /** The transfer's first send, once the payer is known to hold its tokens. */
  private async firstSend(transfer: SandboxTransfer, chainId: number): Promise<Hex> {
    await this.chainCall(() => this.requireFunds(transfer));
    return this.send(transfer, chainId);
  }

  /**
   * More than the sandbox payer holds is the request's refusal (400 INVALID_AMOUNT, as more than a Pix carries is),
   * not a chain that does not answer: the chain would revert it at every retry. Asked only before a first send: a
   * retry of a transfer made finds it first, whatever the payer holds now.
   */
  private async requireFunds(transfer: SandboxTransfer): Promise<void> {
    const held = await this.rail.client.readContract({
      address: transfer.token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [this.account.address],
    });
    if (held >= transfer.units) return;
    throw new CambioError('INVALID_AMOUNT', "/amount/value is more than the sandbox payer's tokens on this chain", {
      path: '/amount/value',
    });
  }

  /** The transfer sent before under this tag (a retry, a first attempt that died after sending), by its logs. */
  private async sent(transfer: SandboxTransfer): Promise<Hex | undefined> {
    const logs = await this.rail.client.getLogs({
      address: transfer.token,
      event: TRANSFER_EVENT,
      args: { from: this.account.address, to: transfer.to },
      fromBlock: 'earliest',
      toBlock: 'latest',
    });
    for (const log of logs) {
      const tx = await this.rail.client.getTransaction({ hash: log.transactionHash! });
      if (tx.input.toLowerCase().endsWith(transfer.tag.slice(2).toLowerCase())) return tx.hash;
    }
    return undefined;
  }

  private send(transfer: SandboxTransfer, chainId: number): Promise<Hex> {
    const chain = defineChain({
      id: chainId,
      name: 'sandbox',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [this.rail.config.rpcUrl!] } },
    });
    const wallet = createWalletClient({ account: this.account, chain, transport: this.transport() });
    const data = concatHex([
      encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [transfer.to, transfer.units] }),
      transfer.tag,
    ]);
    const sending = this.sending.then(() => this.chainCall(() => wallet.sendTransaction({ to: transfer.token, data })));
    this.sending = sending.catch(() => undefined);
    return sending;
  }

  /** Mines what the transfer's block lacks of EVM_CONFIRMATIONS (its own block counts); a retry mines no more. */
  private async mineConfirmations(block: bigint): Promise<void> {
    const head = await this.rail.client.getBlockNumber({ cacheTime: 0 });
    const missing = block + BigInt(this.rail.config.confirmations) - 1n - head;
    if (missing <= 0n) return;
    const test = createTestClient({ mode: 'anvil', transport: this.transport() });
    await test.mine({ blocks: Number(missing) });
  }

  private transport() {
    return http(this.rail.config.rpcUrl, { timeout: this.rail.config.timeoutMs, retryCount: 0 });
  }

  /** A chain that does not answer is "not now": the route answers 503 and the client retries with its key. */
  private async chainCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof CambioError || err instanceof RailUnavailableError) throw err;
      throw new RailUnavailableError(`the sandbox chain did not answer: ${firstLine(err)}`);
    }
  }
}
