// The rail boundary: what Cambio asks of any provider that moves real money, in Cambio's own words. A rail is a
// folder (rails/pix/, rails/boleto/, ...) and an entry in rails/registry.ts; its connector, when the deployment has
// a provider for it, offers the capabilities it has (charges, notices, listing, payouts, returns) in rail-neutral
// types: amounts as decimal strings in the rail's asset. The engine calls it from Temporal activities and owns
// retries and state. Every call is named by an id of ours (txid, idEnvio, return id), so a retried or replayed call
// is the same call at the provider, never a second charge, payout or return.

import type { Config } from '../config';
import type { NonceWriter } from './crypto/nonce-writer';
import type { OutgoingTxStore } from './crypto/outgoing-store';

/** Amounts cross the boundary as decimal strings in the rail's asset (BRL: two places), never as floats. */
export type RailAmount = string;

export interface ChargeRequest {
  /** Our id for the charge (PIX: the txid, 26-35 of [a-zA-Z0-9]), the same for every retry of one deposit. */
  chargeId: string;
  amount: RailAmount;
  /** How long the charge takes a payment, in seconds from its creation. */
  expiresInSeconds: number;
  debtor?: {
    name: string;
    cnpj?: string;
    cpf?: string;
    /** The owner's address as the API holds it (addressLine1, city, state, postalCode, country): a boleto's payer. */
    address?: Record<string, string>;
  };
  /** A line the payer's bank shows (at most 140 characters). */
  description?: string;
  /** The asset the payer sends (the quote's source), for a rail that pays in several (CRYPTO). */
  asset?: string;
  /** A number Postgres gave this charge alone, for a capability that is `numbered` (CRYPTO: the address index). */
  sequence?: number;
}

/** A charge the provider holds: `fundingInstruction` is what the deposit's `intent.fundingInstruction` shows. */
export interface ChargeCreated {
  chargeId: string;
  expiresAt: string;
  /** The instruction the customer pays, in the rail's words (`rail` included). */
  fundingInstruction: Record<string, string>;
  /**
   * A chain's charge (CRYPTO): no payment to it is in a block of `chainId` below `block`. A chain no scan has read
   * yet is first read from there (docs/decisions/0292).
   */
  scanFrom?: { chainId: number; block: string };
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
  /** The asset `amount` is in (PIX: BRL). */
  asset: string;
  receivedAt: string;
  payer?: string;
  /** The account it came from, when the provider's record names it (TED: the sender's CNPJ/CPF and account). */
  payerAccount?: PayerAccount;
  /**
   * Why the provider's record cannot be recorded as it stands (TED: no transactionId, fractions of a cent): recording
   * refuses it, the run's failure for that payment alone, so the run's window stays and the next lists it again.
   */
  unreadable?: string;
  /**
   * The provider named no reference (TED: no transactionId): `endToEndId` is a stand-in for logs and the run's result
   * that names no payment, not even one an operator recorded under the same words (decision 0236).
   */
  unnamed?: boolean;
  returns: ReturnState[];
}

/**
 * Who sent a payment, as the provider's record shows it: the owner's tax id (`bareTaxId`: digits and letters, upper
 * case) and the sending account.
 */
export interface PayerAccount {
  taxId: string;
  personType: 'INDIVIDUAL' | 'COMPANY';
  bankCode?: string;
  branchCode?: string;
  accountNumber?: string;
  accountDigit?: string;
}

export interface PayoutRequest {
  /** Our id for the payout (PIX: idEnvio, 1-35 of [a-zA-Z0-9]), derived from the operation. */
  payoutId: string;
  amount: RailAmount;
  /** The beneficiary's key on the rail (CRYPTO: the WALLET instruction's address). */
  key: string;
  /** The asset paid, for a rail that pays in several (CRYPTO: the stablecoin). */
  asset?: string;
  /**
   * The chain the beneficiary's instruction was reviewed for (CRYPTO's WALLET); absent for a rail without networks and
   * in orders recorded before it was sent (decision 0241).
   */
  network?: string;
}

/** PENDING: the provider has it and may still pay; COMPLETED: money left; FAILED: it never will. */
export type PayoutStatus = 'PENDING' | 'COMPLETED' | 'FAILED';

export interface PayoutState {
  payoutId: string;
  status: PayoutStatus;
  endToEndId?: string;
  /** The provider's own words (PIX: `motivo`): the operator's, never shown to the customer. */
  reason?: string;
  /** FAILED: why, in words the customer may be told, when the connector can tell (decision 0319). */
  forCustomer?: string;
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

/** Charges a customer pays (PIX: a cob with its BR Code). */
export interface ChargeCapability {
  /** Each charge needs a `sequence` from Postgres (CRYPTO: its deposit address's derivation index). */
  readonly numbered?: boolean;
  /** Creates (or finds again, by its id) a charge the customer pays. */
  createCharge(request: ChargeRequest, timeoutMs?: number): Promise<ChargeCreated>;
  /**
   * Cancels a charge whose deposit closed unpaid, by our charge id (BOLETO: the seuNumero), for a rail whose charges
   * stay payable past the window otherwise; a charge paid, cancelled or gone already is left as it is.
   */
  cancelCharge?(chargeId: string, reason: string): Promise<string>;
  /**
   * The id the provider's charge will carry for our `chargeId` (ChargeCreated.chargeId, what `cancelCharge` names),
   * known before the call, when it is not our id itself: a charge that stays payable is guarded by its cancel before
   * it is asked for (payments/charge-cancel.ts, `guardCharge`).
   */
  chargeIdFor?(chargeId: string): string;
}

/** Notices the provider POSTs to `/rails/{rail}/{token}/...` (api/rail-notices.ts). */
export interface NoticeCapability {
  /** Throws NoticeRejectedError 401 unless `token` (the secret part of the notice URL) is this rail's. */
  checkNoticeToken(token: string): void;
  /**
   * A notice is a claim (decisions.md, "A claim is not money"): checks its token and its format (NoticeRejectedError
   * 401 or 400), then reads every item back from the provider over the authenticated client. Only what the
   * provider's record confirms is returned as received, in the provider's words; RailUnavailableError when the
   * provider cannot be asked (nothing is to be recorded then). `path` is what follows the token in the URL.
   */
  verifyNotice(token: string, body: unknown, timeoutMs?: number): Promise<NoticeVerdict>;
  /** Asks the provider to send notices to `url`. */
  registerNotices(url: string): Promise<void>;
}

/** What the provider received, listed: reconciliation's view, independent of notices. */
export interface ListingCapability {
  /** Everything received in the window, every page. */
  listReceived(window: TimeWindow): Promise<ReceivedPayment[]>;
}

export interface PayoutCapability {
  /**
   * Sends a payout, or reads back the one already sent under the same id. FAILED (or a refusal) only on the
   * provider's final answer; an answer that leaves its fate unknown is read back, and a call that cannot tell is
   * retried under the same id (docs/decisions/0108).
   */
  sendPayout(request: PayoutRequest): Promise<PayoutState>;
  /** Reads a payout sent before; one the provider does not hold is sent again under the same id. */
  followPayout(request: PayoutRequest): Promise<PayoutState>;
  payoutStatus(payoutId: string): Promise<PayoutState>;
}

export interface ReturnCapability {
  /** Returns (part of) a received payment, or reads back the return already asked under the same id. */
  returnPayment(request: ReturnRequest): Promise<ReturnState>;
  /** Reads a return asked before; one the provider does not hold is asked again under the same id. */
  followReturn(request: ReturnRequest): Promise<ReturnState>;
  returnStatus(endToEndId: string, returnId: string): Promise<ReturnState>;
}

/**
 * A deposit the sandbox pays at the rail's (simulated) provider or chain, as the sandbox inbound-payment route has it:
 * the deposit's funding instruction and the request's body, in the rail's words.
 */
export interface SandboxPaymentRequest {
  /** The deposit's `intent.fundingInstruction`: its charge (PIX `txid`, BOLETO `seuNumero`, CRYPTO `walletAddress`). */
  fundingInstruction: Record<string, unknown>;
  /** What the payer sends: the body's amount, a decimal string, and its asset. */
  amount: RailAmount;
  asset: string;
  /** An id derived from the request's idempotency key: a retry pays under the same id, so the rail pays once. */
  paymentId: string;
  /** The body's payer fields, for a rail that takes them (PIX, TED: `endToEndId`; TED: `payerTaxId`). */
  payer: { endToEndId?: string; payerTaxId?: string };
}

/** A payment the sandbox made at the provider or on the chain, as Cambio will record it. */
export interface SandboxPaid {
  /** The rail reference Cambio records it under (a Pix's endToEndId, a TED's transactionId, `{chainId}:{tx}:{log}`). */
  reference: string;
  /**
   * How Cambio learns of it: the provider's notice arrives by itself, or the rail's reconciliation Schedule must run
   * (TED's poll, CRYPTO's chain scan), which the route triggers rather than waiting for its period.
   */
  learnedBy: 'notice' | 'reconciliation';
  /** What the route's 503 says while it is not recorded ("the simulated PSP's notice has not been recorded yet"). */
  notYet: string;
  /**
   * The reference names a payment this request made (TED: its own transactionId): the answer shows the record
   * whoever it was matched to. Otherwise the body may have named another's (a Pix endToEndId): RAIL_REFERENCE_IN_USE.
   */
  madeByRequest?: boolean;
}

/**
 * The sandbox's payer (decision 0140): the rail-specific half of the sandbox inbound-payment route, which pays a
 * deposit the way a customer's payer would, so Cambio learns of it by the production path. The engine finds the
 * deposit, keeps the request's key around the effect, waits for the record and decides it; this pays, idempotently.
 */
export interface SandboxPayerCapability<Payment = unknown> {
  /**
   * The payment to make for this deposit, checked as the rail carries it (what it cannot carry is a CambioError, the
   * request's answer); undefined when the sandbox does not pay this deposit on the rail (another asset, a deposit
   * without a charge at the provider): the route then records the payment itself, as an operator would.
   * RailUnavailableError when the provider must be asked and cannot be.
   */
  payment(request: SandboxPaymentRequest): Promise<Payment | undefined>;
  /**
   * Pays it (a retry under the same `paymentId` is the same payment, never a second one) and answers how Cambio will
   * record it. RailUnavailableError: not now, the route answers 503 and the client retries with its key.
   */
  pay(payment: Payment): Promise<SandboxPaid>;
}

/**
 * What a connector may keep in Cambio's database, handed to it by the process that has one (rails/ never imports
 * db/): the CRYPTO hot wallet's outgoing transfers, and the writer of its nonces (its workflow, reached through
 * Temporal). A process without them builds connectors without the capabilities that need them.
 */
export interface RailStores {
  cryptoOutgoing?: OutgoingTxStore;
  cryptoNonces?: NonceWriter;
}

/** A rail's provider as this deployment configured it: the capabilities it has, each optional. */
export interface RailConnector {
  /** The rail as operations name it (`PIX_KEY`). */
  readonly rail: string;
  readonly charges?: ChargeCapability;
  readonly notices?: NoticeCapability;
  readonly listing?: ListingCapability;
  readonly payouts?: PayoutCapability;
  readonly returns?: ReturnCapability;
  /** In sandbox: pays deposits at the simulated provider or the local chain (the sandbox inbound-payment route). */
  readonly sandbox?: SandboxPayerCapability;
  /** Closes its connections (a process that stops). */
  close?(): Promise<void>;
}

/** What a funding instruction may show besides the deposit itself: the deployment's settings, the owner's tax id. */
export interface DepositContext {
  config: Config;
  /** The account owner's CNPJ (or CPF), digits only. */
  ownerTaxId?: string;
  /** What the payer sends: the quote's source, written with its asset's decimals. */
  amount?: string;
}

/**
 * A rail as rails/registry.ts lists it: what it is, the assets it pays in, how a deposit on it is funded, and its
 * connector when the deployment has a provider for it (`connector` undefined: an operator records its payments from
 * the bank statement, `cambio payment record`).
 */
export interface RailEntry {
  /** As operations and funding instructions name it (`PIX_KEY`). */
  readonly rail: string;
  /** Its segment in notice URLs, lower case (`/rails/pix/{token}/pix`). */
  readonly slug: string;
  /** The assets it pays in; the first is what a provider's amounts are in. */
  readonly assets: readonly string[];
  /** A statement transaction's `type` for money that came in on it. */
  readonly transactionType: string;
  /** How payments received on it are recorded: by its connector, or by an operator (`cambio payment record`). */
  readonly recordedBy: 'connector' | 'operator';
  /** A connector's rail whose provider's statement an operator may also record from (`cambio payment record`). */
  readonly operatorMayRecord?: boolean;
  /**
   * How what its provider reports finds its deposit: by the charge it paid (`charge`, the default: PIX's `txid`), or
   * by who paid and how much (`payer`: TED, the oldest open deposit whose owner's tax id and quote amount are the
   * payment's; payments/payer-matching.ts).
   */
  readonly matchBy?: 'charge' | 'payer';
  /**
   * A rail whose connector needs a provider (`recordedBy: 'connector'`) whose payments operators still record
   * (`cambio payment record`) while this deployment has no provider for it (BOLETO without a bank).
   */
  readonly operatorWithoutProvider?: boolean;
  /**
   * Who sends a received payment back: its provider (default for a connector rail), an operator at the bank
   * (`operator`: the return is recorded with an end-to-end id of its own), or an operator at the bank who must say
   * so (`outside`: `cambio payment return --outside --reference`, else RAIL_NOT_CONFIGURED; TED, whose provider only
   * reads: decisions 0129, 0331).
   */
  readonly returnedBy?: 'provider' | 'operator' | 'outside';
  /**
   * A reference an operator typed, in the form the rail's own records carry it (CRYPTO: the hash in lower case), so
   * that the same payment typed otherwise is the same record (decision 0222). Unset: as typed.
   */
  reference?(typed: string): string;
  /**
   * For a rail on which nothing paid after the deposit's window can reach the deposit (PIX: the charge stops taking
   * payments at the provider, the cob's `expiracao`; TED: a credit matches only a deposit whose window had not ended
   * when the bank received it; CRYPTO: `paidAfterWindow` below): how long the deposit still waits after its window
   * for a payment made in time whose notice, poll or confirmation comes late (decisions 0191, 0321, 0322).
   * `charged`: the deposit carries a provider's charge.
   */
  lateArrivalSeconds?(config: Config, deposit: { charged: boolean }): number;
  /**
   * For a rail on which only Cambio's own record says when a payment arrived (CRYPTO: the scanner's first sight of a
   * transfer): whether `payment` arrived after its deposit's window ended. A deposit still waiting for its money
   * (REQUESTED: in its late wait, or with a worker late to expire it) does not take such a payment (decision 0322).
   * Unset: the provider or the matching vouches for the instant (PIX's charge, TED's bank instant).
   */
  paidAfterWindow?(payment: { createdAt: Date }, windowEnd: Date): boolean;
  /**
   * The most one payment on it carries (BOLETO: the barcode's 10-digit amount field, `99999999.99`), in its first
   * asset: a deposit above it is refused (RAIL_REJECTED) before any charge. Unset: no bound of the rail's own.
   */
  readonly maxAmount?: string;
  /** Whether a deposit that expires unpaid has its charge cancelled at the provider (payments/charge-cancel.ts). */
  readonly cancelsUnpaidCharges?: boolean;
  /** The funding instruction's field that names the deposit's charge (default `txid`): notices match by it. */
  readonly chargeField?: string;
  /** How its provider's notices arrive, for a rail whose connector has notices. */
  readonly notices?: {
    /** What the provider appends to the registered `/rails/{slug}/{token}` (PIX: `/pix`). */
    readonly suffix: string;
    /** The secret `{token}` of its notice URL (PIX: PIX_WEBHOOK_TOKEN), which its connector checks. */
    token(config: Config): string;
    /** How long a notice's read-back may take. */
    timeoutMs(config: Config): number;
    /** The secret part of the notice URL (PIX_WEBHOOK_TOKEN, BOLETO_WEBHOOK_TOKEN). */
    token(config: Config): string;
  };
  /** The setting that gives it a provider (named by RAIL_NOT_CONFIGURED), for a rail that has one. */
  readonly providerSetting?: string;
  /** How its funding instruction reads in the API's schema: a sentence, and the fields besides `rail`. */
  readonly instruction: { readonly summary: string; readonly properties: Readonly<Record<string, object>> };
  /** The instruction a deposit shows when no provider's charge gives one (sandbox: deterministic). */
  fundingInstruction(
    operationId: string,
    asset: string,
    dueDate: Date,
    deposit?: DepositContext,
  ): Record<string, string>;
  /** For a rail whose connector lists what it received: its reconciliation schedule (worker/schedules.ts). */
  readonly reconciliation?: {
    /** How often it runs. */
    everySeconds(config: Config): number;
    /** Where a deployment's first run starts, when the configuration says (else its first start). */
    from(config: Config): Date | undefined;
    /** What the schedule's note says it does. */
    note(config: Config): string;
    /** The schedule's workflow, when not railReconciliationWorkflow (PIX keeps the one its schedules run). */
    workflowType?: string;
    /**
     * How far before the last run's end each run lists again, when more than the overlap every rail gets: a provider
     * that dates a payment earlier than it first shows it (a boleto: the payer's day, shown after the compensation).
     */
    lookbackMs?: number;
  };
  /** Whether this configuration has a provider for it (without building the connector). */
  hasProvider(config: Config): boolean;
  /** Its connector, or undefined when this configuration has no provider for it. */
  connector?(config: Config, stores?: RailStores): RailConnector | undefined;
  /**
   * Whether this configuration can pay out `asset` on it, when that takes more than a provider (CRYPTO: a hot wallet
   * key, and the asset's token contract); absent: `hasProvider` for a rail recorded by its connector.
   */
  canPayOut?(config: Config, asset: string): boolean;
}
