import { XMLParser } from 'fast-xml-parser';
import type { Em } from '../../db/orm';
import { stack, TestCustomer } from './stack';
import { assertValidCamt053 } from './statement-documents';

export interface StatementBody {
  id: string;
  accountId: string;
  asset: string;
  periodStart: string;
  periodEnd: string;
  openingBalance: { value: string; asset: string; decimals: number };
  closingBalance: { value: string; asset: string; decimals: number };
  entries: Array<{
    id: string;
    bookedAt: string;
    operationId: string | null;
    operationType: string | null;
    direction: 'CREDIT' | 'DEBIT';
    amount: { value: string };
    balanceAfter: { value: string };
    description: string;
    endToEnd?: string;
  }>;
  credits: { sum: { value: string }; count: number };
  debits: { sum: { value: string }; count: number };
}

/** GET the statement, with the raw bytes kept (supertest's buffer mode) for every format. */
export async function getStatement(
  c: TestCustomer,
  accountId: string,
  query: Record<string, string>,
  accept?: string,
): Promise<{ status: number; headers: Record<string, string>; text: string; bytes: Buffer; body: unknown }> {
  // A read at an instant waits for every transaction that started before it, in the whole Postgres cluster, and is 503
  // with Retry-After past 5 s (decision 0187): `npm test`'s other files, running beside this one on other databases of
  // the same server, hold transactions open on purpose. Asked again as a client told to retry would, three times.
  for (let attempt = 1; ; attempt++) {
    const res = await getStatementOnce(c, accountId, query, accept);
    const unsettled = res.status === 503 && /not settled yet/.test((res.body as { message?: string })?.message ?? '');
    if (!unsettled || attempt >= 3) return res;
    await new Promise((resolve) => setTimeout(resolve, Number(res.headers['retry-after'] ?? 1) * 1000));
  }
}

async function getStatementOnce(
  c: TestCustomer,
  accountId: string,
  query: Record<string, string>,
  accept?: string,
): Promise<{ status: number; headers: Record<string, string>; text: string; bytes: Buffer; body: unknown }> {
  const { http } = await stack();
  let req = http
    .get(`/api/accounts/${accountId}/statement`)
    .query(query)
    .set(c.auth)
    .buffer(true)
    .parse((res, cb) => {
      const chunks: Buffer[] = [];
      res.on('data', (ch: Buffer) => chunks.push(ch));
      res.on('end', () => cb(null, Buffer.concat(chunks)));
    });
  if (accept) req = req.set('Accept', accept);
  const res = await req;
  const bytes = res.body as Buffer;
  const text = bytes.toString('utf8');
  let body: unknown = undefined;
  if (String(res.headers['content-type']).startsWith('application/json')) body = JSON.parse(text);
  // Every camt.053 the suite renders is checked against the official schema (decision 0113).
  if (res.status === 200 && String(res.headers['content-type']).startsWith('application/xml')) {
    await assertValidCamt053(text);
  }
  return { status: res.status, headers: res.headers as Record<string, string>, text, bytes, body };
}

/** RFC 4180 rows (quoted fields, doubled quotes, CRLF). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

export const parseXml = (text: string) =>
  new XMLParser({
    ignoreAttributes: false,
    parseTagValue: false,
    isArray: (name) => ['Ntry', 'Bal'].includes(name),
  }).parse(text);

// Postings of one account the day before today, one a second from 04:00 UTC, each with the balance after it (as
// bench/statements.ts seeds them). Their transactions' keys start with `${prefix}:`.
const SEED_POSTINGS_SQL = `
with p as (
  select g, gen_random_uuid() as tx, 2.00 as amount,
    date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - interval '20 hours' + g * interval '1 second' as at
  from generate_series(1, ?::int) g
), t as (
  insert into ledger_transactions (id, key, operation_id, description, created_at)
  select tx, ?::text || ':' || tx, null, 'seeded posting', at from p
)
insert into ledger_entries (id, transaction_id, account_id, book, asset, amount, created_at, balance_seq, booked_at,
  available_after, held_after)
select gen_random_uuid(), tx, ?::uuid, 'available', 'BRL', amount, at, g, at,
  sum(amount) over (order by g rows between unbounded preceding and current row), 0
from p`;

/**
 * `count` BRL credits of 2.00 on `accountId` yesterday, for a long statement: the account is dated two days back so
 * that they fall inside its life. They have no other side: `removeSeededPostings` takes them away again, so the
 * ledger balances (the suite checks it after each test).
 */
export async function seedPostings(em: Em, accountId: string, count: number, prefix: string): Promise<void> {
  await em.execute(`update accounts set created_at = now() - interval '2 days' where id = ?`, [accountId]);
  await em.execute(SEED_POSTINGS_SQL, [count, prefix, accountId]);
}

export async function removeSeededPostings(em: Em, prefix: string): Promise<void> {
  const keys = `${prefix}:%`;
  await em.execute(
    `delete from ledger_entries where transaction_id in (select id from ledger_transactions where key like ?)`,
    [keys],
  );
  await em.execute('delete from ledger_transactions where key like ?', [keys]);
}
