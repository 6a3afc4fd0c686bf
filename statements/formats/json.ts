// The statement's JSON form, written as it streams: the header fields, the entries array one entry at a time, then
// the closing balance and the totals. Its bytes depend only on the statement (no clock, no map order), so an issued
// statement's SHA-256 is reproducible.
import { StatementTotals, type StatementSource } from '../statement';

const FLUSH_CHARS = 64 * 1024;

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
  let out = `${JSON.stringify(head).slice(0, -1)},"entries":[`;
  let first = true;
  for await (const e of s.entries) {
    totals.add(e);
    out += (first ? '' : ',') + JSON.stringify(e);
    first = false;
    if (out.length >= FLUSH_CHARS) {
      yield out;
      out = '';
    }
  }
  const tail = { closingBalance: h.closingBalance, credits: totals.credits, debits: totals.debits };
  yield `${out}],${JSON.stringify(tail).slice(1)}`;
}
