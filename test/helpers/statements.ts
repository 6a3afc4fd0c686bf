import { XMLParser } from 'fast-xml-parser';
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
