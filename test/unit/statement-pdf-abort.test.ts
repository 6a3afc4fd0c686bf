// A PDF statement whose reader went away (a client that closed the connection) stops drawing and releases its source:
// the API does not read and draw the rest of the statement into memory for nobody.
import { expect } from 'chai';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { statementPdf } from '../../statements/formats/pdf';
import type { StatementEntry, StatementHeader } from '../../statements/statement';

const PAGE = 200;

const page = (n: number): StatementEntry[] =>
  Array.from({ length: PAGE }, (_, i) => ({
    id: `entry-${n}-${i}`,
    bookedAt: new Date(Date.UTC(2026, 0, 1, 0, n, i % 60)).toISOString(),
    operationId: `operation-${n}-${i}`,
    operationType: 'TRANSFER',
    direction: i % 2 ? 'CREDIT' : 'DEBIT',
    amount: { value: '12.34', asset: 'BRL', decimals: 2 },
    balanceAfter: { value: '1000.00', asset: 'BRL', decimals: 2 },
    description: 'Transfer between accounts of the same customer',
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

const document = { holderName: 'Holder Ltda', sequence: 1, renderedAt: new Date('2027-02-01'), messageId: 'm1' };

/** 500 pages of the statement, counting those read and whether the source was closed. */
function counted() {
  const seen = { read: 0, closed: false };
  async function* pages() {
    try {
      for (let n = 0; n < 500; n++) {
        seen.read++;
        yield page(n);
      }
    } finally {
      seen.closed = true;
    }
  }
  return { seen, pages: pages() };
}

describe('PDF statement whose reader went away', function () {
  this.timeout(60000);

  it('stops reading pages and closes its source once its stream is destroyed', async () => {
    const { seen, pages } = counted();
    const out = statementPdf({ header, pages }, document);
    await once(out, 'data');
    out.destroy(); // what Koa does with the body when the client closes the connection
    const before = seen.read;
    await sleep(1500);
    expect(seen.read - before, 'pages read after the reader went away').to.be.at.most(1);
    expect(seen.closed, 'source closed').to.equal(true);
  });

  it('stops waiting for a drain that never comes when its stream is destroyed while backed up', async () => {
    const { seen, pages } = counted();
    const out = statementPdf({ header, pages }, document); // never read: the output backs up
    for (let last = -1; seen.read !== last;) {
      last = seen.read;
      await sleep(500);
    }
    out.destroy();
    await sleep(500);
    expect(seen.read, 'waited on the reader, not read to the end').to.be.below(500);
    expect(seen.closed, 'source closed').to.equal(true);
  });
});
