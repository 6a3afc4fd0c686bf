// Statements are written on the API's one thread: every format lets other requests run while it writes (decision
// 0169, amended for JSON and CSV). Counted, not timed: how often the event loop turned while one page of the source
// (2,000 entries) was written.
import { expect } from 'chai';
import { statementJson } from '../../statements/formats/json';
import { statementCsv } from '../../statements/formats/csv';
import { statementPdf } from '../../statements/formats/pdf';
import { ENTRIES_PER_TURN } from '../../statements/formats/ahead';
import { nextTurn } from '../../statements/formats/turns';
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

/** The statement of one page of `entries`. */
function source(): StatementSource {
  async function* pages() {
    yield entries;
  }
  return { header, pages: pages() };
}

/** Counts the event loop's turns from now until `stop()`: `turns()` is the count so far. */
function loopTurns(): { turns: () => number; stop: () => void } {
  let turns = 0;
  let counting = true;
  const tick = () => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  return { turns: () => turns, stop: () => (counting = false) };
}

/** How often the event loop turned while `write` ran. */
async function turnsWhile(write: () => Promise<void>): Promise<number> {
  const loop = loopTurns();
  await write();
  loop.stop();
  return loop.turns();
}

describe('PDF statement drawing', function () {
  this.timeout(60000);

  it('lets the event loop turn while it draws a page of 2,000 entries', async () => {
    const document = { holderName: 'Holder Ltda', sequence: 1, renderedAt: new Date('2027-02-01'), messageId: 'm1' };
    const chunks: Buffer[] = [];
    const turns = await turnsWhile(async () => {
      const out = statementPdf(source(), document);
      out.on('data', (c: Buffer) => chunks.push(c));
      await new Promise((resolve, reject) => out.on('end', resolve).on('error', reject));
    });
    expect(Buffer.concat(chunks).subarray(0, 5).toString()).to.equal('%PDF-');
    // At least a turn per 25 entries drawn; drawn in one go it was one or two.
    expect(turns).to.be.at.least(ENTRIES / 25);
  });
});

describe('JSON and CSV statement writing', () => {
  for (const [name, format] of [
    ['JSON', statementJson],
    ['CSV', statementCsv],
  ] as const) {
    it(`${name} lets the event loop turn while it writes a page of 2,000 entries`, async () => {
      let text = '';
      const turns = await turnsWhile(async () => {
        for await (const chunk of format(source())) text += chunk;
      });
      expect(text).to.include('entry-1999');
      // At least a turn per ENTRIES_PER_TURN entries; written in one go it was one or two.
      expect(turns).to.be.at.least(ENTRIES / ENTRIES_PER_TURN);
    });
  }
});

describe('statement writers together', () => {
  it('run one turn between two turns of the event loop, whatever their number, each in its order', async () => {
    const loop = loopTurns();
    const seen: Array<{ writer: number; loopTurn: number }> = [];
    const writer = async (n: number) => {
      for (let i = 0; i < 20; i++) {
        await nextTurn();
        seen.push({ writer: n, loopTurn: loop.turns() });
      }
    };
    await Promise.all([0, 1, 2, 3].map(writer));
    loop.stop();
    // Each writer's own setImmediate gave all four a turn in every loop turn: four at each count.
    const perLoopTurn = new Map<number, number>();
    for (const s of seen) perLoopTurn.set(s.loopTurn, (perLoopTurn.get(s.loopTurn) ?? 0) + 1);
    expect(Math.max(...perLoopTurn.values())).to.equal(1);
    expect(seen.slice(0, 8).map((s) => s.writer)).to.deep.equal([0, 1, 2, 3, 0, 1, 2, 3]);
  });
});
