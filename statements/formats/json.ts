// The statement's JSON form, written as it streams: the header fields, the entries array one entry at a time, then
// the closing balance and the totals. Its bytes depend only on the statement (no clock, no map order), so an issued
// statement's SHA-256 is reproducible. Each chunk it yields ends on an entry boundary (statements/issued-body.ts
// relies on it to read a stored statement back piece by piece).
import { StatementTotals, type StatementSource } from '../statement';
import { turnEvery } from './ahead';

const FLUSH_CHARS = 64 * 1024;

/** Where the entries array opens and closes in the text: neither can occur inside a string JSON.stringify wrote. */
export const ENTRIES_OPEN = ',"entries":[';
export const ENTRIES_CLOSE = '],"closingBalance":';

export async function* statementJson(s: StatementSource): AsyncGenerator<string> {
  const h = s.header;
  const totals = new StatementTotals(h.asset);
  const head = {
    id: h.id,
    accountId: h.accountId,
    asset: h.asset,
    periodStart: h.periodStart,
    periodEnd: h.periodEnd,
    openingBalance: h.openingBalance,
  };
  let out = `${JSON.stringify(head).slice(0, -1)}${ENTRIES_OPEN}`;
  let first = true;
  let written = 0;
  for await (const page of s.pages) {
    for (const e of page) {
      totals.add(e);
      out += (first ? '' : ',') + JSON.stringify(e);
      first = false;
      await turnEvery(++written);
    }
    if (out.length >= FLUSH_CHARS) {
      yield out;
      out = '';
    }
  }
  const tail = { closingBalance: h.closingBalance, credits: totals.credits, debits: totals.debits };
  yield `${out}],${JSON.stringify(tail).slice(1)}`; // `],"closingBalance":...`, ENTRIES_CLOSE
}
