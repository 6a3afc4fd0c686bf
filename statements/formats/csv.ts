// The statement as CSV (RFC 4180, CRLF): one row per entry, oldest first, for spreadsheets and ERP imports. The
// opening and closing balances travel in response headers (api/routes/statements.ts); each row's balanceAfter
// carries the running balance.
import type { StatementEntry, StatementSource } from '../statement';
import { readAhead, turnEvery } from './ahead';

export const STATEMENT_CSV_HEADER =
  'id,bookedAt,operationId,operationType,direction,amount,asset,balanceAfter,description,endToEnd';

const FLUSH_CHARS = 64 * 1024;

/**
 * A free-text field: one that starts with a formula character (=, +, -, @, a tab or a carriage return) gets a `'`
 * before it, whatever follows (OWASP CSV injection: `-2+3+cmd|' /C calc'!A0` starts with a digit after its minus),
 * and it is quoted when it holds a comma, a quote or a line break. Amounts never come here: they stay numbers.
 */
function field(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * Only the free-text fields (description, operation type, endToEnd) go through `field`: ids, instants, the direction
 * and amounts are written by us and never hold a comma, a quote or a leading formula character (an amount here is
 * never negative), so the two regular expressions per field are spent where they can matter.
 */
export const csvRow = (e: StatementEntry): string =>
  `${e.id},${e.bookedAt},${e.operationId ?? ''},${field(e.operationType)},${e.direction},${e.amount.value},` +
  `${e.amount.asset},${e.balanceAfter.value},${field(e.description)},${field(e.endToEnd)}\r\n`;

export async function* statementCsv(s: StatementSource): AsyncGenerator<string> {
  let out = `${STATEMENT_CSV_HEADER}\r\n`;
  let written = 0;
  for await (const page of readAhead(s.pages)) {
    for (const e of page) {
      out += csvRow(e);
      await turnEvery(++written);
    }
    if (out.length >= FLUSH_CHARS) {
      yield out;
      out = '';
    }
  }
  yield out;
}
