// The CRYPTO connector's payouts and returns (docs/decisions/0134, 0142): a withdrawal to a WALLET instruction and
// the return of an unmatched transfer are both an ERC-20 `transfer` from the hot wallet (./transfers.ts), named by
// our id, so a retried or replayed activity follows the same transaction instead of sending another.
import { getAddress, zeroAddress } from 'viem';
import { CambioError } from '../../domain/errors';
import { RailRejectedError } from '../errors';
import type {
  PayoutCapability,
  PayoutRequest,
  PayoutState,
  ReturnCapability,
  ReturnRequest,
  ReturnState,
  ReturnStatus,
} from '../rail';
import { amountToUnits, InexactAmountError } from './amounts';
import { erc20Transfer } from './erc20-transfer';
import type { ChainToken } from './chain';
import { transferReferenceParts } from './reference';
import type { HotWalletTransfers, TransferOrder, TransferState } from './transfers';

/** What the payouts need of the connector: its tokens as the chain showed them at start. */
export interface TokenBook {
  token(asset: string): Promise<ChainToken>;
  tokens(): Promise<ChainToken[]>;
  /** The chain's id, as checked at start. */
  chainId(): Promise<number>;
  /** The network this deployment pays on (CRYPTO_NETWORK). */
  network: string;
}

// Nothing was sent and the same request would be refused again (RAIL_REJECTED in the activity), on any attempt: the
// checks come before the transfer's row, so no earlier attempt can have sent one. `forCustomer`: why, in the
// customer's words, when the refusal is of the customer's own data (decision 0319).
const refused = (message: string, forCustomer?: string) =>
  new RailRejectedError(message, 400, undefined, true, forCustomer);

/**
 * `amount` in `token`'s units, exactly: a token of fewer decimals than Cambio's 6 cannot carry every amount, and one
 * it cannot carry is the provider's refusal (the payout FAILED, its hold released), never a transfer rounded.
 */
function exactUnits(amount: string, token: { asset: string; decimals: number }): bigint {
  try {
    return amountToUnits(amount, token.decimals);
  } catch (err) {
    if (!(err instanceof InexactAmountError)) throw err;
    throw refused(`${token.asset} on this chain cannot carry ${amount}: ${err.message}`);
  }
}

const payoutTx = (payoutId: string) => `payout:${payoutId}`;
const returnTx = (returnId: string) => `return:${returnId}`;

/** A received transfer's rail reference, `{chainId}:{txHash}:{logIndex}` (the deposit scanner's endToEndId). */
export function parseTransferReference(endToEndId: string): { chainId: number; hash: `0x${string}`; logIndex: number } {
  const parts = transferReferenceParts(endToEndId);
  if (!parts) throw refused(`${endToEndId} is not a CRYPTO transfer reference (chainId:txHash:logIndex)`);
  return parts;
}

export class CryptoPayouts implements PayoutCapability, ReturnCapability {
  constructor(
    private readonly tokens: TokenBook,
    private readonly transfers: HotWalletTransfers,
    private readonly receipt: (hash: `0x${string}`) => Promise<{ logs: readonly LogLike[] }>,
  ) {}

  /**
   * `request.key` is the WALLET instruction's address, `request.asset` the stablecoin it is paid in. A transfer ordered
   * under the payout's id is followed as it was ordered, whatever the configuration says now; only a first one needs
   * the stablecoin's contract, so the connector's RAIL_NOT_CONFIGURED for a token it lacks (a CambioError) says
   * nothing was ordered, let alone sent (decision 0209).
   */
  async sendPayout(request: PayoutRequest): Promise<PayoutState> {
    if (!request.asset) throw refused(`payout ${request.payoutId} names no asset`);
    const id = payoutTx(request.payoutId);
    const ordered = await this.transfers.status(id);
    if (ordered) return payoutState(request.payoutId, ordered);
    const first = await this.firstOrder(id, () => this.payoutOrder(id, request, request.asset!));
    return payoutState(request.payoutId, 'status' in first ? first : await this.transfers.send(first));
  }

  private async payoutOrder(id: string, request: PayoutRequest, asset: string): Promise<TransferOrder> {
    // Accepted while the deployment paid on another chain (or held ON_HOLD across the change): the address was
    // reviewed there, and here it may be nobody's or someone else's. Nothing was ordered: RAIL_NOT_CONFIGURED, as a
    // token without a contract (decisions 0209, 0241).
    if (request.network && request.network !== this.tokens.network) {
      throw new CambioError(
        'RAIL_NOT_CONFIGURED',
        `this deployment pays on ${this.tokens.network}; the WALLET was approved on ${request.network}`,
        { rail: 'CRYPTO', network: request.network, payingNetwork: this.tokens.network },
      );
    }
    const token = await this.tokens.token(asset);
    const order = { id, token, to: getAddress(request.key), units: exactUnits(request.amount, token) };
    await this.refuseUnspendable(order.id, order.to, "the payee's address");
    return order;
  }

  /**
   * A first send's order, or the state of the transfer an earlier attempt ordered meanwhile. A first send refused for
   * good (a check of ours: nothing was ordered) is recorded first, so that a nonce request an earlier attempt left
   * waiting at the wallet's workflow (that attempt timed out meanwhile) is never given a nonce nothing would send,
   * which every later transfer of the wallet would wait behind; when that request was given its nonce first, the
   * transfer is followed instead (decision 0344).
   */
  private async firstOrder(id: string, order: () => Promise<TransferOrder>): Promise<TransferOrder | TransferState> {
    try {
      return await order();
    } catch (err) {
      const final =
        err instanceof RailRejectedError || (err instanceof CambioError && err.code === 'RAIL_NOT_CONFIGURED');
      if (!final) throw err;
      const given = await this.transfers.refuseUnlessOrdered(id, err.message);
      if (given) return given;
      throw err;
    }
  }

  /**
   * Refuses, before the first transfer under `id`, a recipient whose tokens nobody would ever spend (decision 0183):
   * the zero address (no key; a token burns or refuses what it is sent), a configured token's contract (an ERC-20
   * keeps what is sent to it), the hot wallet itself (the tokens never leave, the books say they did). A transfer
   * ordered already is followed whatever its recipient: its bytes may be on the chain. `whose`: the address as the
   * customer knows it ("the payee's address"), when the refusal is told to the customer (a payout's, decision 0319;
   * a return's failure keeps Cambio's own words, decision 0278).
   */
  private async refuseUnspendable(id: string, to: `0x${string}`, whose?: string): Promise<void> {
    const tokens = await this.tokens.tokens();
    // Why, for the operator, and what the address is, for the customer.
    let why: [string, string] | undefined;
    if (to === zeroAddress)
      why = ['the zero address, which nobody can spend from', 'the zero address, which nobody can spend from'];
    else if (tokens.some((t) => getAddress(t.address) === to))
      why = ["a token's own contract, which keeps it for good", "a token's own contract, which would keep it for good"];
    else if (to === getAddress(this.transfers.wallet)) why = ['the hot wallet itself', "Cambio's own hot wallet"];
    if (why && !(await this.transfers.ordered(id))) {
      throw refused(`nothing is sent to ${to}: ${why[0]}`, whose && `${whose} is ${why[1]}`);
    }
  }

  /** A payout pending (or waiting for funds) read again; the same call as sending it, by its id. */
  followPayout(request: PayoutRequest): Promise<PayoutState> {
    return this.sendPayout(request);
  }

  async payoutStatus(payoutId: string): Promise<PayoutState> {
    const state = await this.transfers.status(payoutTx(payoutId));
    return payoutState(payoutId, state ?? { status: 'PENDING' });
  }

  /**
   * Sends the received transfer's amount back to the address it came from, in the token it came in. A return ordered
   * already is followed (its bytes may be on the chain); a first one checks the transfer it names on this chain
   * first: a reference an operator typed may name another chain, no transaction, or less than the amount recorded,
   * and the hot wallet never pays more than the transfer brought in (decision 0183).
   */
  async returnPayment(request: ReturnRequest): Promise<ReturnState> {
    const id = returnTx(request.returnId);
    const ordered = await this.transfers.status(id);
    if (ordered) return returnState(request, ordered);
    const first = await this.firstOrder(id, () => this.returnOrder(id, request));
    return returnState(request, 'status' in first ? first : await this.transfers.send(first));
  }

  private async returnOrder(id: string, request: ReturnRequest): Promise<TransferOrder> {
    const ref = parseTransferReference(request.endToEndId);
    const chainId = await this.tokens.chainId();
    if (ref.chainId !== chainId) throw refused(`${request.endToEndId} names chain ${ref.chainId}, not ${chainId}`);
    const receipt = await this.receipt(ref.hash).catch((err: Error) => {
      if (err.name === 'TransactionReceiptNotFoundError') return undefined;
      throw err;
    });
    if (!receipt) throw refused(`chain ${chainId} has no mined transaction ${ref.hash}: nothing to send back`);
    const log = receipt.logs.find((l) => l.logIndex === ref.logIndex);
    if (!log) throw refused(`no log ${ref.logIndex} in transaction ${ref.hash}`);
    const token = (await this.tokens.tokens()).find((t) => t.address.toLowerCase() === log.address.toLowerCase());
    if (!token) throw refused(`log ${request.endToEndId} is not a transfer of a configured token`);
    const transfer = erc20Transfer(log);
    if (!transfer) throw refused(`log ${request.endToEndId} is not an ERC-20 Transfer`);
    const order = { id, token, to: transfer.from, units: exactUnits(request.amount, token) };
    if (order.units > transfer.value) {
      throw refused(`${request.amount} ${token.asset} is more than transfer ${request.endToEndId} carried`);
    }
    // A mint's Transfer comes from the zero address: there is no sender to send it back to (an operator returns it
    // outside Cambio, to whoever had it minted).
    await this.refuseUnspendable(order.id, order.to);
    return order;
  }

  followReturn(request: ReturnRequest): Promise<ReturnState> {
    return this.returnPayment(request);
  }

  async returnStatus(endToEndId: string, returnId: string): Promise<ReturnState> {
    const state = await this.transfers.status(returnTx(returnId));
    return returnState({ endToEndId, returnId, amount: '' }, state ?? { status: 'PENDING' });
  }
}

export interface LogLike {
  address: string;
  logIndex: number | null;
  data: `0x${string}`;
  topics: readonly `0x${string}`[];
}

const payoutState = (payoutId: string, state: TransferState): PayoutState => ({
  payoutId,
  status: state.status,
  ...(state.hash && state.status === 'COMPLETED' ? { endToEndId: state.hash } : {}),
  ...(state.reason ? { reason: state.reason } : {}),
});

const RETURN_STATUS: Record<TransferState['status'], ReturnStatus> = {
  PENDING: 'PENDING',
  COMPLETED: 'RETURNED',
  FAILED: 'FAILED',
};

const returnState = (request: ReturnRequest, state: TransferState): ReturnState => ({
  returnId: request.returnId,
  amount: request.amount,
  status: RETURN_STATUS[state.status],
  ...(state.hash && state.status === 'COMPLETED' ? { endToEndId: state.hash } : {}),
  ...(state.reason ? { reason: state.reason } : {}),
});
