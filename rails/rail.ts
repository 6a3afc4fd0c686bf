// The rail boundary: what Cambio asks of any provider that moves real money, in Cambio's own words. One connector
// per rail implements it (rails/pix/ for PIX); the engine calls it from Temporal activities and owns retries and
// state. Every call is named by an id of ours (txid, idEnvio, return id), so a retried or replayed call is the same
// call at the provider, never a second charge, payout or return.

/** Amounts cross the boundary as decimal strings with two places (BRL), never as floats. */
export type RailAmount = string;

export interface ChargeRequest {
  /** Our id for the charge (PIX: the txid, 26-35 of [a-zA-Z0-9]), the same for every retry of one deposit. */
  chargeId: string;
  amount: RailAmount;
  /** How long the charge takes a payment, in seconds from its creation. */
  expiresInSeconds: number;
  debtor?: { name: string; cnpj?: string; cpf?: string };
  /** A line the payer's bank shows (at most 140 characters). */
  description?: string;
}

/** The funding instruction a customer pays: what `intent.fundingInstruction` shows for a PIX deposit. */
export interface ChargeCreated {
  chargeId: string;
  keyType: string;
  key: string;
  /** Where the payer's app fetches the charge (a URL without its scheme). */
  location: string;
  /** The dynamic BR Code, "Pix Copia e Cola". */
  pixCopiaECola: string;
  expiresAt: string;
}

export type ReturnStatus = 'PENDING' | 'RETURNED' | 'FAILED';

export interface ReturnState {
  returnId: string;
  amount: RailAmount;
  status: ReturnStatus;
  reason?: string;
  /** The end-to-end id of the money sent back (PIX: `rtrId`), once the provider gave one. */
  endToEndId?: string;
}

/** A payment the provider says it received: one per end-to-end id, whatever notice or list brought it. */
export interface ReceivedPayment {
  endToEndId: string;
  /** The charge it paid; absent for a payment made to the key without a charge. */
  chargeId?: string;
  amount: RailAmount;
  receivedAt: string;
  payer?: string;
  returns: ReturnState[];
}

export interface PayoutRequest {
  /** Our id for the payout (PIX: idEnvio, 1-35 of [a-zA-Z0-9]), derived from the operation. */
  payoutId: string;
  amount: RailAmount;
  /** The beneficiary's key on the rail. */
  key: string;
}

/** PENDING: the provider has it and may still pay; COMPLETED: money left; FAILED: it never will. */
export type PayoutStatus = 'PENDING' | 'COMPLETED' | 'FAILED';

export interface PayoutState {
  payoutId: string;
  status: PayoutStatus;
  endToEndId?: string;
  reason?: string;
}

export interface ReturnRequest {
  endToEndId: string;
  /** Our id for the return (PIX: the devolucao id, 1-35 of [a-zA-Z0-9]). */
  returnId: string;
  amount: RailAmount;
  description?: string;
}

/** A notice item the provider's own record does not confirm: nothing is recorded for it. */
export interface RefusedClaim {
  endToEndId: string;
  /** Why, for the log (the provider has no such payment, or another txid or amount). */
  reason: string;
}

/** A notice read back item by item: what the provider's records confirm (in its words) and what they do not. */
export interface NoticeVerdict {
  confirmed: ReceivedPayment[];
  refused: RefusedClaim[];
}

export interface TimeWindow {
  from: Date;
  to: Date;
}

export interface Rail {
  /** The rail as operations name it (`PIX_KEY`). */
  readonly rail: string;
  /** Creates (or finds again, by its id) a charge the customer pays. */
  createCharge(request: ChargeRequest): Promise<ChargeCreated>;
  /** Throws NoticeRejectedError 401 unless `token` (the secret part of the notice URL) is this rail's. */
  checkNoticeToken(token: string): void;
  /**
   * A notice is a claim (decisions.md, "A claim is not money"): checks its token and its format (NoticeRejectedError
   * 401 or 400), then reads every item back from the provider over the authenticated client. Only what the
   * provider's record confirms is returned as received, in the provider's words; RailUnavailableError when the
   * provider cannot be asked (nothing is to be recorded then).
   */
  verifyNotice(token: string, body: unknown, timeoutMs?: number): Promise<NoticeVerdict>;
  /** Asks the provider to send notices to `url`. */
  registerNotices(url: string): Promise<void>;
  /** Everything received in the window, every page: reconciliation's view, independent of notices. */
  listReceived(window: TimeWindow): Promise<ReceivedPayment[]>;
  /**
   * Sends a payout, or reads back the one already sent under the same id. FAILED (or a refusal) only on the
   * provider's final answer; an answer that leaves its fate unknown is read back, and a call that cannot tell is
   * retried under the same id (docs/decisions/0108).
   */
  sendPayout(request: PayoutRequest): Promise<PayoutState>;
  /** Reads a payout sent before; one the provider does not hold is sent again under the same id. */
  followPayout(request: PayoutRequest): Promise<PayoutState>;
  payoutStatus(payoutId: string): Promise<PayoutState>;
  /** Returns (part of) a received payment, or reads back the return already asked under the same id. */
  returnPayment(request: ReturnRequest): Promise<ReturnState>;
  /** Reads a return asked before; one the provider does not hold is asked again under the same id. */
  followReturn(request: ReturnRequest): Promise<ReturnState>;
}
