// A statement of one asset of one account over [periodStart, periodEnd) (docs/decisions.md, "Statements and balances
// at any instant"): its header (opening and closing balances) and its entries, read a page at a time so that every
// format streams in constant memory. Shared by the API (on demand) and the worker (issued statements); it calls
// repositories only.
import { createHash } from 'node:crypto';
import type { Em } from '../db/orm';
import {
  historyPointBefore,
  ownsAccount,
  statementEntriesPage,
  type EntryPosition,
} from '../db/repositories/statement-entries';
import { amount } from '../domain/amount';
import type { Amount } from '../domain/money';
import { Dec } from '../domain/money';
import { CambioError } from '../domain/errors';
import { isoMicros, parsePeriod } from '../domain/report-period';

export interface StatementHeader {
  /** Derived from account, asset and period: the same period of the same account always has the same id. */
  id: string;
  accountId: string;
  asset: string;
  periodStart: string;
  periodEnd: string;
  openingBalance: Amount;
  closingBalance: Amount;
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

/** What every format writes: the header, then the entries oldest first (each iterable once). */
export interface StatementSource {
  header: StatementHeader;
  entries: AsyncIterable<StatementEntry>;
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
 * NOT_FOUND for an account the customer does not own. The closing balance is the history point before periodEnd as
 * read now, and the entries stop at it: a posting booked while the statement streams is in neither, so closing
 * always equals opening plus the entries.
 */
export async function openStatement(
  em: Em,
  q: { accountId: string; asset: string; periodStart: unknown; periodEnd: unknown },
): Promise<StatementSource> {
  const period = parsePeriod(q.periodStart, q.periodEnd);
  if (!(await ownsAccount(em, q.accountId))) throw new CambioError('NOT_FOUND', 'account not found');
  const [opening, closing] = await Promise.all([
    historyPointBefore(em, q.accountId, q.asset, isoMicros(period.start.micros)),
    historyPointBefore(em, q.accountId, q.asset, isoMicros(period.end.micros)),
  ]);
  const header: StatementHeader = {
    id: statementId(q.accountId, q.asset, period.start.echo, period.end.echo),
    accountId: q.accountId,
    asset: q.asset,
    periodStart: period.start.echo,
    periodEnd: period.end.echo,
    openingBalance: amount(opening.total, q.asset),
    closingBalance: amount(closing.total, q.asset),
  };
  const from = opening.position;
  const until = closing.position;
  return { header, entries: until === null ? empty() : readEntries(em, q.accountId, q.asset, from, until) };
}

async function* empty(): AsyncGenerator<StatementEntry> {}

async function* readEntries(
  em: Em,
  accountId: string,
  asset: string,
  from: EntryPosition | null,
  until: EntryPosition,
): AsyncGenerator<StatementEntry> {
  let after = from;
  for (;;) {
    const rows = await statementEntriesPage(em, accountId, asset, after, until, PAGE);
    for (const r of rows) {
      const signed = new Dec(r.amount);
      yield {
        id: r.id,
        bookedAt: r.bookedAt,
        operationId: r.operationId,
        operationType: r.operationType,
        direction: signed.isNegative() ? 'DEBIT' : 'CREDIT',
        amount: amount(signed.abs(), asset),
        balanceAfter: amount(r.balanceAfter, asset),
        description: r.description,
        ...(r.endToEnd ? { endToEnd: r.endToEnd } : {}),
      };
    }
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1];
    after = { bookedAt: last.bookedAt, seq: last.seq };
  }
}
