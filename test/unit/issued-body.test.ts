import { expect } from 'chai';
import { statementJson } from '../../statements/formats/json';
import { entriesIn, headerOf } from '../../statements/issued-body';
import type { StatementEntry, StatementHeader } from '../../statements/statement';

const amount = (value: string) => ({ value, asset: 'BRL' as const, decimals: 2 });
const header: StatementHeader = {
  id: '6b1f5f2e-3c4d-8e5f-a6b7-c8d9e0f1a2b3',
  accountId: '0f0e0d0c-0b0a-4909-8807-060504030201',
  asset: 'BRL',
  periodStart: '2026-10-01T00:00:00.000Z',
  periodEnd: '2026-11-01T00:00:00.000Z',
  openingBalance: amount('10.00'),
  closingBalance: amount('1234.56'),
};
// Descriptions holding the very markers a piece is cut at, quotes and commas: inside a JSON string they are escaped.
const entries: StatementEntry[] = Array.from({ length: 900 }, (_, i) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  bookedAt: '2026-10-02T03:04:05.123456Z',
  operationId: null,
  operationType: i % 2 ? 'DEPOSIT' : null,
  direction: i % 3 ? 'CREDIT' : 'DEBIT',
  amount: amount('1.00'),
  balanceAfter: amount(`${i}.00`),
  description: i % 5 ? `posting ${i}` : `odd ],"closingBalance": and ,"entries":[ "quoted", text ${i}`,
}));

async function chunks(list: StatementEntry[]): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of statementJson({
    header,
    pages: (async function* () {
      for (let i = 0; i < list.length; i += 100) yield list.slice(i, i + 100);
    })(),
  })) {
    out.push(chunk);
  }
  return out;
}

/** Reads pieces back as statements/issued-body.ts does. */
const readBack = (pieces: string[]) => ({
  header: headerOf(pieces[0], pieces[pieces.length - 1]),
  entries: pieces.flatMap((p, i) => entriesIn(p, i === 0, i === pieces.length - 1)),
});

describe('issued statement pieces', () => {
  it('a body cut at any of the JSON writer chunk boundaries reads back to the same statement', async () => {
    const written = await chunks(entries);
    expect(written.length).to.be.greaterThan(2);
    for (const per of [1, 2, written.length]) {
      const pieces: string[] = [];
      for (let i = 0; i < written.length; i += per) pieces.push(written.slice(i, i + per).join(''));
      const back = readBack(pieces);
      expect(back.header).to.deep.equal(header);
      expect(back.entries).to.deep.equal(JSON.parse(written.join('')).entries);
      expect(back.entries.map((e) => e.description)).to.deep.equal(entries.map((e) => e.description));
    }
  });

  it('a statement without entries is one piece with none', async () => {
    const written = await chunks([]);
    expect(readBack([written.join('')])).to.deep.equal({ header, entries: [] });
  });
});
