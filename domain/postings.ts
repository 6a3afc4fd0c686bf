import { createHash } from 'node:crypto';
import { Dec } from './money';

/** Books that hold a customer's money on an account; everything else is a system book (account null). */
export type CustomerBook = 'available' | 'held';

/** One leg of a ledger transaction. */
export interface Posting {
  accountId: string | null;
  book: CustomerBook | string;
  asset: string;
  /** Signed: positive increases the book. */
  amount: Dec;
}

/** What the legs of an operation's steps are computed from (an operation row has all of it). */
export interface PostedOperation {
  type: 'DEPOSIT' | 'WITHDRAWAL' | 'SWAP' | 'TRANSFER';
  customerId: string;
  accountId: string;
  targetAccountId: string | null;
  sourceAsset: string;
  sourceAmount: Dec;
  targetAsset: string;
  targetAmount: Dec;
  fees: ReadonlyArray<{ source: string; amount: { value: string } }>;
  /** A withdrawal's: `beneficiary.paymentInstruction.rail`, the rail its money leaves by. */
  intent?: Record<string, unknown>;
}

/**
 * The ledger legs of each operation step. Customer money lives in an account's `available` and `held`
 * books; the system books stand for the outside world: `world:<rail>` (money that arrived or left through
 * a payment rail), `world:fx` (our conversion desk) and `revenue:fx_spread` (the spread we keep). Every
 * function returns legs that balance per asset.
 */

const feeOf = (op: PostedOperation): Dec => {
  const fee = op.fees.find((f) => f.source === 'FX_SPREAD');
  return fee ? new Dec(fee.amount.value) : new Dec(0);
};

/** Reserve the source amount: available → held on the operation's account. */
export function holdPostings(op: PostedOperation): Posting[] {
  return [
    { accountId: op.accountId, book: 'available', asset: op.sourceAsset, amount: op.sourceAmount.neg() },
    { accountId: op.accountId, book: 'held', asset: op.sourceAsset, amount: op.sourceAmount },
  ];
}

/** Undo the reservation: the mirror of holdPostings. */
export const releasePostings = (op: PostedOperation): Posting[] =>
  holdPostings(op).map((p) => ({ ...p, amount: p.amount.neg() }));

/** Convert `from` (source asset, leaving `fromBook`) into the target asset arriving in `to`; the spread is revenue. */
function convert(
  op: PostedOperation,
  from: Omit<Posting, 'asset' | 'amount'>,
  to: Omit<Posting, 'asset' | 'amount'>,
): Posting[] {
  if (op.sourceAsset === op.targetAsset && op.sourceAmount.eq(op.targetAmount)) {
    return [
      { ...from, asset: op.sourceAsset, amount: op.sourceAmount.neg() },
      { ...to, asset: op.targetAsset, amount: op.targetAmount },
    ];
  }
  const fee = feeOf(op);
  return [
    { ...from, asset: op.sourceAsset, amount: op.sourceAmount.neg() },
    { accountId: null, book: 'revenue:fx_spread', asset: op.sourceAsset, amount: fee },
    { accountId: null, book: 'world:fx', asset: op.sourceAsset, amount: op.sourceAmount.minus(fee) },
    { accountId: null, book: 'world:fx', asset: op.targetAsset, amount: op.targetAmount.neg() },
    { ...to, asset: op.targetAsset, amount: op.targetAmount },
  ].filter((p) => !p.amount.isZero());
}

const available = (op: PostedOperation) => ({ accountId: op.accountId, book: 'available' });

/** Complete the operation: the held source leaves, the target lands where the operation sends it. */
export function settlePostings(op: PostedOperation): Posting[] {
  const held = { accountId: op.accountId, book: 'held' };
  switch (op.type) {
    case 'SWAP':
      return convert(op, held, { accountId: op.accountId, book: 'available' });
    case 'TRANSFER':
      return convert(op, held, { accountId: op.targetAccountId, book: 'available' });
    case 'WITHDRAWAL':
      // Out through the rail of its payment instruction, the book its rail's money comes in from (decision 0192).
      return convert(op, held, { accountId: null, book: payoutBook(op) });
    case 'DEPOSIT':
      // The payments it used arrived in the customer's suspense (receivePostings); the deposit takes them out.
      return convert(op, { accountId: suspenseAccountId(op.customerId), book: 'available' }, available(op));
  }
}

/**
 * The suspense: money that reached a rail and is in no account yet (decisions 0045, 0076). A
 * ledger account of its own per customer, plus the platform's for payments nobody could attribute, with a balance
 * row like any other (`available` holds it; never negative). Its id is derived from its owner, so every process
 * and the migration that created it name the same account without a lookup: md5 of `suspense:<customerId>` (or
 * `suspense:platform`) read as a uuid, as Postgres's `md5(...)::uuid` does. It is no customer account: nothing lists
 * it and no balance read of the API reaches it.
 */
export function suspenseAccountId(customerId: string | null): string {
  const hex = createHash('md5')
    .update(`suspense:${customerId ?? 'platform'}`)
    .digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const worldBook = (rail: string): string => `world:${rail.toLowerCase()}`;

/**
 * The world book a withdrawal's money leaves to: its payment instruction's rail's. A row from before the intent named
 * the rail (every one of them PIX) keeps the book withdrawals had then.
 */
function payoutBook(op: PostedOperation): string {
  const beneficiary = op.intent?.beneficiary as { paymentInstruction?: { rail?: unknown } } | undefined;
  const rail = beneficiary?.paymentInstruction?.rail;
  return typeof rail === 'string' ? worldBook(rail) : 'world:pix';
}

type Arrival = { customerId: string | null; rail: string; asset: string; amount: Dec };

/** An inbound payment arrives: from the outside world through its rail into its suspense. */
export function receivePostings(p: Arrival): Posting[] {
  return [
    { accountId: null, book: worldBook(p.rail), asset: p.asset, amount: p.amount.neg() },
    { accountId: suspenseAccountId(p.customerId), book: 'available', asset: p.asset, amount: p.amount },
  ];
}

/** An unmatched payment is sent back through its rail: the mirror of its arrival. */
export const returnPostings = (p: Arrival): Posting[] =>
  receivePostings(p).map((x) => ({ ...x, amount: x.amount.neg() }));

/** A payment of the platform's suspense credited to a customer: it moves to that customer's suspense first. */
export function attributePostings(p: { customerId: string; asset: string; amount: Dec }): Posting[] {
  return [
    { accountId: suspenseAccountId(null), book: 'available', asset: p.asset, amount: p.amount.neg() },
    { accountId: suspenseAccountId(p.customerId), book: 'available', asset: p.asset, amount: p.amount },
  ];
}
