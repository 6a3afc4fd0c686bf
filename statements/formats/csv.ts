// The statement as CSV (RFC 4180, CRLF): one row per entry, oldest first, for spreadsheets and ERP imports. The
// opening and closing balances travel in response headers (api/routes/statements.ts); each row's balanceAfter
// carries the running balance.
import type { StatementEntry, StatementSource } from '../statement';

export const STATEMENT_CSV_HEADER =
  'id,bookedAt,operationId,operationType,direction,amount,asset,balanceAfter,description,endToEnd';

const FLUSH_CHARS = 64 * 1024;

/** A field quoted when it holds a comma, a quote or a line break; a leading formula character is neutralised. */
function field(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  const safe = /^[=+\-@\t\r]/.test(value) && !/^-?\d/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export const csvRow = (e: StatementEntry): string =>
  [
    e.id,
    e.bookedAt,
    e.operationId,
    e.operationType,
    e.direction,
    e.amount.value,
    e.amount.asset,
    e.balanceAfter.value,
    e.description,
    e.endToEnd,
  ]
    .map(field)
    .join(',') + '\r\n';

export async function* statementCsv(s: StatementSource): AsyncGenerator<string> {
  let out = `${STATEMENT_CSV_HEADER}\r\n`;
  for await (const e of s.entries) {
    out += csvRow(e);
    if (out.length >= FLUSH_CHARS) {
      yield out;
      out = '';
    }
  }
  yield out;
}
