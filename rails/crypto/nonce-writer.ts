// The single writer of the hot wallet's nonces, as the CRYPTO connector sees it (docs/decisions/0142): a port, so
// rails/ never knows that behind it is a Temporal workflow per hot wallet (workflows/hot-wallet.ts), reached by the
// activities' Temporal client (activities/hot-wallet-nonces.ts). Every payout and return asks it for its transfer's
// nonce; it gives them in arrival order, consecutively, and an id that has a nonce gets the same one back.
import type { OutgoingTx } from './outgoing-store';

/** What a transfer is, before it has a nonce. */
export type NewOutgoingTx = Pick<OutgoingTx, 'id' | 'chainId' | 'wallet' | 'token' | 'recipient' | 'units'>;

/**
 * What the wallet held when the transfer asked (token base units, wei) and the gas one transfer may burn at the fee
 * then (wei), as decimal strings. The writer checks them against every transfer it gave a nonce before this one.
 */
export interface WalletFunds {
  tokens: string;
  ether: string;
  gasPerTransfer: string;
}

/** The wallet's funds do not cover a new transfer besides the ones given a nonce before it: none was given. */
export class WalletShortError extends Error {
  override readonly name = 'WalletShortError';
}

export interface NonceWriter {
  /**
   * The transfer of `tx.id` with its nonce: the wallet's next one, or the one this id was given before. The
   * wallet's first transfer starts its count at `chainNonce` (what the chain counts for the address). With `funds`,
   * a new transfer they do not cover gets no nonce: WalletShortError (decision 0221).
   */
  nonceFor(tx: NewOutgoingTx, chainNonce: number, funds?: WalletFunds): Promise<OutgoingTx>;
}
