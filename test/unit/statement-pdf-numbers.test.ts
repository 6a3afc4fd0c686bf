// A PDF statement's amounts and balances are figures: printed whole at any size the API accepts (15 integer digits,
// 6 decimals for a stablecoin), never cut with an ellipsis as a description is.
import { expect } from 'chai';
import { statementPdf } from '../../statements/formats/pdf';
import type { StatementEntry, StatementHeader } from '../../statements/statement';
import { overlaps, pdfPages } from '../helpers/statement-documents';

const usdc = (value: string) => ({ value, asset: 'USDC' as const, decimals: 6 });

const entries: StatementEntry[] = [
  ['123456789.123456', '123456789.123456'],
  ['999999999999999.999999', '1000000123456789.123455'],
  ['0.000001', '1000000123456789.123456'],
].map(([amount, after], i) => ({
  id: `entry-${i}`,
  bookedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
  operationId: `operation-${i}`,
  operationType: 'DEPOSIT',
  direction: 'CREDIT',
  amount: usdc(amount),
  balanceAfter: usdc(after),
  description: 'Deposit',
}));

const header: StatementHeader = {
  id: 'statement-1',
  accountId: 'account-1',
  asset: 'USDC',
  periodStart: '2026-01-01T00:00:00.000Z',
  periodEnd: '2026-02-01T00:00:00.000Z',
  openingBalance: usdc('0.000000'),
  closingBalance: usdc('1000000123456789.123456'),
};

async function render(): Promise<Buffer> {
  async function* pages() {
    yield entries;
  }
  const document = { holderName: 'Holder Ltda', sequence: 1, renderedAt: new Date('2026-03-01'), messageId: 'm1' };
  const out = statementPdf({ header, pages: pages() }, document);
  const chunks: Buffer[] = [];
  for await (const c of out) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('PDF statement figures', function () {
  this.timeout(60000);

  it('prints every amount and balance whole, however long, without overlapping its neighbours', async () => {
    const [page] = await pdfPages(await render());
    const text = page.items.map((i) => i.str.trim());
    for (const e of entries) {
      expect(text, `amount of ${e.id}`).to.include(`+${e.amount.value}`);
      expect(text, `balance after ${e.id}`).to.include(e.balanceAfter.value);
    }
    expect(text.filter((t) => t.includes('…'))).to.deep.equal([]);
    expect(overlaps(page)).to.deep.equal([]);
  });
});
