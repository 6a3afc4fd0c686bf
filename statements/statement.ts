// A statement of one asset of one account over [periodStart, periodEnd) (decision 0073): its header (opening and
// closing balances) and its entries, read a page at a time so that every format streams in constant memory. Shared by
// the API (on demand) and the worker (issued statements); it calls repositories only.
import { createHash } from 'node:crypto';
import type { Em } from '../db/orm';
import {
  historyPointsAround,
  ownsAccount,
  statementRowsPage,
  type EntryPosition,
  type StatementEntryRow,
} from '../db/repositories/statement-entries';
import { assetDecimals, type AssetCode } from '../domain/assets';
import { amount } from '../domain/amount';
import type { Amount } from '../domain/money';
import { Dec } from '../domain/money';
import { CambioError } from '../domain/errors';
import { isoMicros, parsePeriod, type Instant } from '../domain/report-period';
import { READ_MAX_WAIT_MS, untilBookedBefore } from '../services/booked-before';

export interface StatementHeader {
  /** Derived from account, asset and period: the same period of the same account always has the same id. */
  id: string;
  accountId: string;
  asset: string;
  periodStart: string;
  periodEnd: string;
  openingBalance: Amount;
  closingBalance: Amount;
  /**
   * When the balances were read, on the database's clock (the one postings are booked by): a period that had not
   * ended then has an interim closing balance, whenever the document is written. Not part of the statement's JSON;
   * absent for an issued statement, whose period had ended.
   */
  readAt?: Date;
  /**
   * False: the period had not ended on the database's clock when it was read, so a posting booked in it could still
   * commit and its figures are interim. Absent for an issued statement, whose period had ended and settled.
   */
  settled?: boolean;
}

export type Direction = 'CREDIT' | 'DEBIT';

export interface StatementEntry {
  id: string;
  bookedAt: string;
  operationId: string | null;
  operationType: string | null;
  direction: Direction;
  amount: Amount;
  balanceAfter: Amount;
  description: string;
  endToEnd?: string;
}

/**
 * What every format writes: the header, then the entries oldest first, a page at a time (iterable once). A format
 * turns a whole page into text before it asks for the next: the page's objects die young, where one await per entry
 * kept every page alive across collections and the process's memory grew with the statement's length.
 */
export interface StatementSource {
  header: StatementHeader;
  pages: AsyncIterable<StatementEntry[]>;
}

export interface DirectionTotal {
  sum: Amount;
  count: number;
}

/** Per direction `{sum, count}`, accumulated while the entries stream. */
export class StatementTotals {
  private credit = { sum: new Dec(0), count: 0 };
  private debit = { sum: new Dec(0), count: 0 };

  constructor(private readonly asset: string) {}

  add(entry: StatementEntry): void {
    const side = entry.direction === 'CREDIT' ? this.credit : this.debit;
    side.sum = side.sum.plus(entry.amount.value);
    side.count++;
  }

  get credits(): DirectionTotal {
    return { sum: amount(this.credit.sum, this.asset), count: this.credit.count };
  }

  get debits(): DirectionTotal {
    return { sum: amount(this.debit.sum, this.asset), count: this.debit.count };
  }
}

const PAGE = 2000;

/** The statement id: a UUID made of the SHA-256 of what identifies the statement. */
export function statementId(accountId: string, asset: string, periodStart: string, periodEnd: string): string {
  const h = createHash('sha256').update(`${accountId}|${asset}|${periodStart}|${periodEnd}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * Opens the statement of the scope's customer's account: VALIDATION_ERROR or INVALID_PERIOD for a bad period,
 * NOT_FOUND for an account the customer does not own. The opening and closing balances are the history points before
 * periodStart and periodEnd as read now, in one snapshot, and the entries stop at the closing one: a posting booked
 * while the statement is read is in neither, so closing always equals opening plus the entries.
 */
export async function openStatement(
  em: Em,
  q: { accountId: string; asset: string; periodStart: unknown; periodEnd: unknown },
): Promise<StatementSource> {
  const period = parsePeriod(q.periodStart, q.periodEnd);
  if (!(await ownsAccount(em, q.accountId))) throw new CambioError('NOT_FOUND', 'account not found');
  // A period that has ended is read once every posting booked in it has committed (decision 0187); one that has not
  // ended on the database's clock is interim, and read as it stands, but its start, when past, is waited for all the
  // same: its opening balance (camt.053's OPBD) is printed as final, and is the previous period's close.
  const horizon = { pastOnly: true, maxWaitMs: READ_MAX_WAIT_MS };
  const settled = await untilBookedBefore(em, isoMicros(period.end.micros), horizon);
  if (!settled) await untilBookedBefore(em, isoMicros(period.start.micros), horizon);
  // One snapshot for both: read apart, a posting that committed between them could open the statement above its close.
  const {
    points: [opening, closing],
    readAt,
  } = await historyPointsAround(em, q.accountId, q.asset, isoMicros(period.start.micros), isoMicros(period.end.micros));
  const [periodStart, periodEnd] = [exactly(period.start), exactly(period.end)];
  const header: StatementHeader = {
    id: statementId(q.accountId, q.asset, periodStart, periodEnd),
    accountId: q.accountId,
    asset: q.asset,
    periodStart,
    periodEnd,
    openingBalance: amount(opening.total, q.asset),
    closingBalance: amount(closing.total, q.asset),
    readAt,
    settled,
  };
  const from = opening.position;
  const until = closing.position;
  return { header, pages: until === null ? empty() : readEntries(em, q.accountId, q.asset, from, until) };
}

/**
 * A bound as the statement names it (decision 0173): toISOString() when it falls on a whole millisecond, as every
 * issued period does (so their ids stay what they were), else with its six digits. The millisecond alone named a
 * different window: a period ending at .123001 printed as ending at .123 above an entry booked at .123000, and had the
 * id of the statement that leaves that entry out.
 */
const exactly = (bound: Instant): string => (bound.micros % 1000n === 0n ? bound.echo : isoMicros(bound.micros));

async function* empty(): AsyncGenerator<StatementEntry[]> {}

/** The entries after `from` up to `until`, a keyset page of history rows at a time. */
async function* readEntries(
  em: Em,
  accountId: string,
  asset: string,
  from: EntryPosition | null,
  until: EntryPosition,
): AsyncGenerator<StatementEntry[]> {
  const decimals = assetDecimals(asset as AssetCode);
  let after = from;
  for (;;) {
    const rows = await statementRowsPage(em, accountId, asset, decimals, after, until, PAGE);
    const full = rows.length === PAGE;
    // A full page may end inside a posting's legs: its last posting is left for the next page, which starts after
    // the last whole one. A posting has a handful of legs on one account-asset, far fewer than a page.
    const end = full ? lastPostingStart(rows) : rows.length;
    yield [...entriesOf(rows, end, asset, decimals)];
    if (!full) return;
    after = { bookedAt: rows[end - 1].bookedAt, seq: rows[end - 1].seq };
  }
}

/** Where the page's last posting starts (its legs share a position). */
function lastPostingStart(rows: StatementEntryRow[]): number {
  let i = rows.length - 1;
  while (i > 0 && rows[i - 1].seq === rows[i].seq) i--;
  return i;
}

/**
 * One entry per posting: its legs (consecutive rows of one position) summed, a posting that nets zero (a hold or
 * its release) left out. A posting of one leg, nearly all of them, is printed from the row's strings as they are.
 */
function* entriesOf(
  rows: StatementEntryRow[],
  end: number,
  asset: string,
  decimals: number,
): Generator<StatementEntry> {
  for (let i = 0; i < end;) {
    const first = rows[i];
    let j = i + 1;
    while (j < end && rows[j].seq === first.seq) j++;
    let signed = first.amount;
    if (j - i > 1) {
      const sum = rows.slice(i, j).reduce((acc, r) => acc.plus(r.amount), new Dec(0));
      signed = sum.isZero() ? '0' : sum.toFixed(decimals);
    }
    i = j;
    if (signed === '0' || /^-?0(\.0*)?$/.test(signed)) continue;
    const debit = signed.startsWith('-');
    yield {
      id: first.transactionId,
      bookedAt: first.bookedAt,
      operationId: first.operationId,
      operationType: first.operationType,
      direction: debit ? 'DEBIT' : 'CREDIT',
      amount: { value: debit ? signed.slice(1) : signed, asset: asset as AssetCode, decimals },
      balanceAfter: { value: rows[j - 1].balanceAfter, asset: asset as AssetCode, decimals },
      description: first.description,
      ...(first.endToEnd ? { endToEnd: first.endToEnd } : {}),
    };
  }
}
