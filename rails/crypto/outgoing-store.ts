// Where the hot wallet's outgoing transfers are kept (Postgres, db/repositories/crypto-outgoing.ts; the process
// hands it to the connector, since rails/ never imports db/). Its contract is what makes one payout one transfer:
// a nonce is given to an id once, in order, and the signed bytes stored for an id are never replaced.

export interface OutgoingTx {
  /** Our id: `payout:{idEnvio}` or `return:{returnId}`. */
  id: string;
  chainId: number;
  wallet: string;
  nonce: number;
  token: string;
  recipient: string;
  /** Token base units, a decimal string. */
  units: string;
  raw: string | null;
  hash: string | null;
  final: boolean;
}

export interface OutgoingTxStore {
  find(id: string): Promise<OutgoingTx | undefined>;
  /** The next nonce of the wallet for `tx.id` (or the one it already has); the first starts at `chainNonce`. */
  reserve(
    tx: Pick<OutgoingTx, 'id' | 'chainId' | 'wallet' | 'token' | 'recipient' | 'units'>,
    chainNonce: number,
  ): Promise<OutgoingTx>;
  /** Stores the signed bytes unless an earlier attempt did; answers what is stored. */
  storeSigned(id: string, raw: string, hash: string): Promise<OutgoingTx>;
  markFinal(id: string): Promise<void>;
  /** Units of `token` and transfers of any token the wallet sent or will send that are not final yet. */
  open(chainId: number, wallet: string, token: string): Promise<{ units: string; transfers: number }>;
}
