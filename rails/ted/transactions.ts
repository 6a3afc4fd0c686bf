// The pure half of reading the collection account (Open Finance Brasil Accounts API v2, `GET
// /accounts/v2/accounts/{accountId}/transactions`): which booking days a window asks for, how every page is
// followed, and which entries are TEDs received (with their payer) in Cambio's words. No I/O here.
import { Dec } from '../../domain/money';
import { bareTaxId } from '../../domain/tax-id';
import type { PayerAccount, ReceivedPayment, TimeWindow } from '../rail';

/** One entry of `data` as the Accounts API v2 writes it (fields Cambio reads). */
export interface AccountTransaction {
  transactionId?: string;
  /** TRANSACAO_EFETIVADA (made), TRANSACAO_PROCESSANDO (may still not be) or LANCAMENTO_FUTURO (scheduled). */
  completedAuthorisedPaymentType?: string;
  type?: string;
  creditDebitType?: string;
  transactionAmount?: { amount?: string; currency?: string };
  transactionDateTime?: string;
  /** Text; a bank that writes it as a JSON number is read by its digits. */
  partieCnpjCpf?: string | number;
  partiePersonType?: string;
  partieCompeCode?: string;
  partieBranchCode?: string;
  partieNumber?: string;
  partieCheckDigit?: string;
}

/** One page: `{data, links: {next?}, meta: {totalPages}}`. */
export interface TransactionsPage {
  data?: AccountTransaction[];
  links?: { self?: string; next?: string };
  meta?: { totalRecords?: number; totalPages?: number };
}

// Banks book in Brasília time (UTC-3 all year since 2019): a booking date is a day there, not in UTC.
const BRASILIA_OFFSET_MS = -3 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

const bookingDay = (at: number): string => new Date(at + BRASILIA_OFFSET_MS).toISOString().slice(0, 10);

/**
 * The booking days that cover `window`: from the day `from` falls on, but never later than the day before `to`'s,
 * through `to`'s day. Booking dates are days, and a credit may be booked (listed) a while after its transaction time:
 * every read covers today and yesterday at least, so one booked late still falls in some poll's days.
 */
export function bookingDates(window: TimeWindow): { fromBookingDate: string; toBookingDate: string } {
  const to = window.to.getTime();
  const from = Math.min(window.from.getTime(), to - DAY_MS);
  return { fromBookingDate: bookingDay(from), toBookingDate: bookingDay(to) };
}

// A bank that keeps answering `links.next` without end is a fault, not a busy day: a day of TEDs at 100 a page is
// far below this.
const MAX_PAGES = 10_000;

/**
 * Every page from page 1: the next while the page says there is one (`links.next`, or a page number below
 * `meta.totalPages`) and it was not empty. `fetchPage` throws for an answer that is not a page.
 */
export async function followPages(
  fetchPage: (page: number) => Promise<TransactionsPage>,
): Promise<AccountTransaction[]> {
  const out: AccountTransaction[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const body = await fetchPage(page);
    const data = body.data ?? [];
    out.push(...data);
    const more = !!body.links?.next || page < (body.meta?.totalPages ?? 0);
    if (!more || data.length === 0) return out;
  }
  throw new Error(`the bank listed more than ${MAX_PAGES} pages of transactions`);
}

// The Accounts API writes amounts as `^\d{1,15}\.\d{2,4}$`; a TED carries whole cents.
const AMOUNT = /^\d{1,15}\.\d{2,4}$/;

/**
 * Why an entry that is a TED received cannot be recorded as it stands, or null. It is still passed on
 * (`unreadable`): recording refuses it, which is the run's failure for that credit alone, so the cursor stays and the
 * next run lists it again (decision 0188). A TED whose payer the bank does not name is readable: money all the same.
 * One the bank has not effected yet (TRANSACAO_PROCESSANDO, LANCAMENTO_FUTURO) is not money yet, and is listed again
 * until it is (decision 0301). Nothing here throws, whatever the bank wrote: one odd entry never stops a poll.
 */
export function creditProblem(t: unknown): string | null {
  if (!isEntry(t)) return 'the entry is not an object';
  if (typeof t.transactionId !== 'string' || !t.transactionId) return 'no transactionId';
  const status = t.completedAuthorisedPaymentType;
  if (status != null && status !== EFFECTED) return `not effected yet (completedAuthorisedPaymentType ${status})`;
  const amount = String(t.transactionAmount?.amount ?? '');
  if (!AMOUNT.test(amount)) return `amount "${amount}" is not a decimal of 2 to 4 places`;
  if (new Dec(amount).decimalPlaces() > 2 || new Dec(amount).lte(0)) return `amount ${amount} is not whole cents`;
  if ((t.transactionAmount?.currency ?? 'BRL') !== 'BRL') return `currency ${t.transactionAmount?.currency}`;
  if (payerText(t) === undefined) return `partieCnpjCpf ${JSON.stringify(t.partieCnpjCpf)} is no tax id`;
  return null;
}

// The one completedAuthorisedPaymentType that is money in the account.
const EFFECTED = 'TRANSACAO_EFETIVADA';

// The credits a payer makes from an account of its own to the collection account: a TED, a transfer within the
// collection bank (what a TED between two accounts of one bank is booked as), a DOC. Any of them is the owner's money
// sent as the instruction asks (decision 0302); other credits (an investment redeemed, a loan, interest) are not a
// payer's. Nor is a Pix: the PIX rail's PSP account may be this very account, and a Pix into it is then a PIX
// payment the PIX rail records under its end-to-end id; read here too it would be a second record of one money.
const PAYER_TRANSFERS = new Set(['TED', 'TRANSFERENCIA_MESMA_INSTITUICAO', 'DOC']);

const isEntry = (t: unknown): t is AccountTransaction => typeof t === 'object' && t !== null && !Array.isArray(t);

/**
 * A credit a payer sent to the account (`creditDebitType` CREDITO, `type` one of PAYER_TRANSFERS), or an entry Cambio
 * cannot tell anything of (not an object): passed on to fail as unreadable, never skipped (decision 0188).
 */
export const isTedCredit = (t: unknown): boolean =>
  !isEntry(t) || (PAYER_TRANSFERS.has(t.type ?? '') && t.creditDebitType === 'CREDITO');

/** The payer's tax id as the bank wrote it, as text: a JSON number by its digits; undefined when it is neither. */
function payerText(t: AccountTransaction): string | undefined {
  const v = t.partieCnpjCpf;
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : undefined;
}

/**
 * The payer's tax id as Cambio compares it (`bareTaxId`: digits and letters, upper case; the alphanumeric CNPJ keeps
 * its letters), with the leading zeros a bank writing it as a number dropped: a legal person's is 14 characters, a
 * natural person's 11, and 12 or 13 digits can only be a CNPJ.
 */
export function payerTaxIdOf(t: AccountTransaction): string {
  const bare = bareTaxId(payerText(t) ?? '');
  if (!/^\d+$/.test(bare)) return bare;
  const natural = t.partiePersonType === 'PESSOA_NATURAL';
  const legal = t.partiePersonType === 'PESSOA_JURIDICA' || bare.length > 11;
  if (legal && !natural && bare.length < 14) return bare.padStart(14, '0');
  if (natural && bare.length < 11) return bare.padStart(11, '0');
  return bare;
}

/**
 * A TED credit as a received payment: its `transactionId` is the rail reference, its payer the sending account when
 * the bank names one (`partieCnpjCpf` is conditional in the Accounts API: without it the TED is the platform's, for
 * an operator). An entry with a `creditProblem` carries it as `unreadable`.
 */
export function receivedTed(entry: unknown): ReceivedPayment {
  const problem = creditProblem(entry);
  const t: AccountTransaction = isEntry(entry) ? entry : {};
  const taxId = payerTaxIdOf(t);
  const payerAccount: PayerAccount | undefined = taxId
    ? {
        taxId,
        personType: t.partiePersonType === 'PESSOA_NATURAL' ? 'INDIVIDUAL' : 'COMPANY',
        ...(t.partieCompeCode ? { bankCode: t.partieCompeCode } : {}),
        ...(t.partieBranchCode ? { branchCode: t.partieBranchCode } : {}),
        ...(t.partieNumber ? { accountNumber: t.partieNumber } : {}),
        ...(t.partieCheckDigit ? { accountDigit: t.partieCheckDigit } : {}),
      }
    : undefined;
  const amount = String(t.transactionAmount?.amount ?? '');
  const named = typeof t.transactionId === 'string' && t.transactionId ? t.transactionId : undefined;
  return {
    endToEndId: named ?? UNNAMED,
    amount: problem ? amount : new Dec(amount).toFixed(2),
    asset: 'BRL',
    receivedAt: typeof t.transactionDateTime === 'string' ? t.transactionDateTime : new Date().toISOString(),
    ...(payerAccount ? { payerAccount } : {}),
    ...(problem ? { unreadable: problem } : {}),
    ...(named ? {} : { unnamed: true }),
    returns: [],
  };
}

// The reference a credit with no transactionId is reported under: it is never recorded (`unreadable`).
const UNNAMED = '(no transactionId)';
