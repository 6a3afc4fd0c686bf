// A PDF statement is drawn on the API's one thread: it must let other requests run while it draws (decision 0169).
// Counted, not timed: how often the event loop turned while one page of the source (2,000 entries) was drawn.
import { expect } from 'chai';
import { statementPdf } from '../../statements/formats/pdf';
import type { StatementEntry, StatementHeader } from '../../statements/statement';

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

describe('PDF statement drawing', function () {
  this.timeout(60000);

  it('lets the event loop turn while it draws a page of 2,000 entries', async () => {
    async function* pages() {
      yield entries;
    }
    const document = { holderName: 'Holder Ltda', sequence: 1, renderedAt: new Date('2027-02-01'), messageId: 'm1' };
    let turns = 0;
    let drawing = true;
    const tick = () => {
      turns++;
      if (drawing) setImmediate(tick);
    };
    setImmediate(tick);
    const out = statementPdf({ header, pages: pages() }, document);
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    await new Promise((resolve, reject) => out.on('end', resolve).on('error', reject));
    drawing = false;
    expect(Buffer.concat(chunks).subarray(0, 5).toString()).to.equal('%PDF-');
    // At least a turn per 25 entries drawn; drawn in one go it was one or two.
    expect(turns).to.be.at.least(ENTRIES / 25);
  });
});
