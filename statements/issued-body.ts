// An issued statement's stored JSON text read back a piece at a time (decision 0083): the JSON form as stored, byte for
// byte, and the same statement as a source for the other formats, parsed one piece at a time. A piece is a run of the
// JSON writer's chunks (formats/json.ts), so it ends on an entry boundary: the first holds the header and opens the
// entries array, the last closes it with the closing balance and the totals, and what lies between is whole entries
// separated by commas.
import type { Em } from '../db/orm';
import { issuedStatementEnds, issuedStatementPieces } from '../db/repositories/issued-statements';
import type { StatementEntry, StatementHeader, StatementSource } from './statement';
import { ENTRIES_CLOSE, ENTRIES_OPEN } from './formats/json';

// Pieces read per query: each is about a megabyte (statements/issue.ts).
const PIECES_PER_READ = 2;

/** The stored text, in order. */
export async function* issuedStatementText(em: Em, id: string): AsyncGenerator<string> {
  for (let from = 0; ;) {
    const pieces = await issuedStatementPieces(em, id, from, PIECES_PER_READ);
    for (const p of pieces) yield p.text;
    if (pieces.length < PIECES_PER_READ) return;
    from = pieces[pieces.length - 1].n + 1;
  }
}

/** The stored statement as a source for any format; null when the scope's customer has no such statement. */
export async function issuedStatementSource(em: Em, id: string): Promise<StatementSource | null> {
  const ends = await issuedStatementEnds(em, id);
  if (!ends) return null;
  return { header: headerOf(ends.first, ends.last), pages: storedEntries(em, id) };
}

/** The header, from the first piece (up to the entries) and the last (after them). */
export function headerOf(first: string, last: string): StatementHeader {
  const head = JSON.parse(`${first.slice(0, first.indexOf(ENTRIES_OPEN))}}`) as StatementHeader;
  const tail = JSON.parse(`{${last.slice(last.lastIndexOf(ENTRIES_CLOSE) + 2)}`) as {
    closingBalance: StatementHeader['closingBalance'];
  };
  return {
    id: head.id,
    accountId: head.accountId,
    asset: head.asset,
    periodStart: head.periodStart,
    periodEnd: head.periodEnd,
    openingBalance: head.openingBalance,
    closingBalance: tail.closingBalance,
  };
}

async function* storedEntries(em: Em, id: string): AsyncGenerator<StatementEntry[]> {
  let first = true;
  let pending: string | undefined;
  // One piece behind: whether a piece is the last is known when the next read comes back empty.
  for await (const text of issuedStatementText(em, id)) {
    if (pending !== undefined) {
      yield entriesIn(pending, first, false);
      first = false;
    }
    pending = text;
  }
  if (pending !== undefined) yield entriesIn(pending, first, true);
}

/** The entries a piece holds. */
export function entriesIn(text: string, first: boolean, last: boolean): StatementEntry[] {
  const from = first ? text.indexOf(ENTRIES_OPEN) + ENTRIES_OPEN.length : 0;
  const to = last ? text.lastIndexOf(ENTRIES_CLOSE) : text.length;
  const list = text.slice(from, to).replace(/^,/, '');
  return list === '' ? [] : (JSON.parse(`[${list}]`) as StatementEntry[]);
}
