// JSON and CSV statements are written on the API's one thread: they let other requests run while they write
// (decision 0169, amended). Counted, not timed: how often the event loop turned while one page (2,000 entries) was
// turned into text.
import { expect } from 'chai';
import { statementJson } from '../../statements/formats/json';
import { statementCsv } from '../../statements/formats/csv';
import { ENTRIES_PER_TURN } from '../../statements/formats/ahead';
import type { StatementEntry, StatementHeader, StatementSource } from '../../statements/statement';

const ENTRIES = 2000;

const entries: StatementEntry[] = Array.from({ length: ENTRIES }, (_, i) => ({
  id: `entry-${i}`,
  bookedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  operationId: `operation-${i}`,
  operationType: 'TRANSFER',
  direction: i % 2 ? 'CREDIT' : 'DEBIT',
  amount: { value: '12.34', asset: 'BRL', decimals: 2 },
  balanceAfter: { value: `${1000 + i}.00`, asset: 'BRL', decimals: 2 },
  description: 'Transfer between accounts of the same customer',
  endToEnd: 'E12345678202601010000abcdefghijkl',
}));

const header: StatementHeader = {
  id: 'statement-1',
  accountId: 'account-1',
  asset: 'BRL',
  periodStart: '2026-01-01T00:00:00.000Z',
  periodEnd: '2027-01-01T00:00:00.000Z',
  openingBalance: { value: '0.00', asset: 'BRL', decimals: 2 },
  closingBalance: { value: '0.00', asset: 'BRL', decimals: 2 },
};

async function turnsWhileWriting(format: (s: StatementSource) => AsyncGenerator<string>): Promise<number> {
  async function* pages() {
    yield entries;
  }
  let turns = 0;
  let writing = true;
  const tick = () => {
    turns++;
    if (writing) setImmediate(tick);
  };
  setImmediate(tick);
  let text = '';
  for await (const chunk of format({ header, pages: pages() })) text += chunk;
  writing = false;
  expect(text).to.include('entry-1999');
  return turns;
}

describe('JSON and CSV statement writing', () => {
  for (const [name, format] of [
    ['JSON', statementJson],
    ['CSV', statementCsv],
  ] as const) {
    it(`${name} lets the event loop turn while it writes a page of 2,000 entries`, async () => {
      // At least a turn per ENTRIES_PER_TURN entries; written in one go it was one or two.
      expect(await turnsWhileWriting(format)).to.be.at.least(ENTRIES / ENTRIES_PER_TURN);
    });
  }
});
