// Where the hot wallet's outgoing transfers are kept (Postgres, db/repositories/crypto-outgoing.ts; the process
// hands it to the connector, since rails/ never imports db/). Its contract is what makes one payout one transfer:
// the signed bytes stored for an id are never replaced. Nonces are not given here: only the hot wallet's workflow
// writes them (./nonce-writer.ts), so the connector has no way around it.

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
  /** Stores the signed bytes unless an earlier attempt did; answers what is stored. */
  storeSigned(id: string, raw: string, hash: string): Promise<OutgoingTx>;
  markFinal(id: string): Promise<void>;
  /**
   * Records that `id` is refused before any nonce, so that none is ever given it (a request still waiting at the
   * nonce writer included); answers the transfer instead when it was given a nonce first (decision 0344).
   */
  refuseUnordered(id: string, reason: string): Promise<OutgoingTx | undefined>;
  /** Units of `token` and transfers of any token the wallet sent or will send that are not final yet. */
  open(chainId: number, wallet: string, token: string): Promise<{ units: string; transfers: number }>;
}
