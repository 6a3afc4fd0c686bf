// Operations of an account whose tags an operator set: the tags travel with every operation into its settled
// movements and the daily totals, and no tag an operator can set may keep an operation from settling.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { tenantEm } from '../../db/orm';
import { tagAccount } from '../../services/accounts';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, fund, untilStatus } from '../helpers/money';
import { idem, newCustomer, stack } from '../helpers/stack';

describe('tagged operations', function () {
  this.timeout(120000);

  it('a transfer of an account with a long propagating tag settles, and its daily total counts it', async () => {
    const { services, http } = await stack();
    const c = await newCustomer();
    const [source, target] = [await activeAccount(c, ['BRL']), await activeAccount(c, ['BRL'])];
    await fund(c, source.id, 'BRL', '100.00');
    // A note an operator pasted into a tag: 4 KB that do not compress, past what one btree index entry holds.
    const note = randomBytes(2048).toString('hex');
    await tagAccount(tenantEm(services.orm, c.customerId), source.id, { key: 'note', value: note, propagate: true });
    const res = await http
      .post('/api/operations/transfer')
      .set(c.auth)
      .set(idem())
      .send({ sourceAccountId: source.id, targetAccountId: target.id, amount: { value: '40.00', asset: 'BRL' } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.tags).to.deep.equal([{ key: 'note', value: note }]);
    // Before: the settlement's daily total could not be indexed, so the step failed and was retried for ever, the
    // transfer stayed REQUESTED and its 40.00 held.
    await untilStatus(c, res.body.id, 'COMPLETED', 15000);
    expect(await balance(c, source.id, 'BRL')).to.deep.equal({ available: '60.00', held: '0.00', total: '60.00' });
    expect((await balance(c, target.id, 'BRL')).available).to.equal('40.00');
    const day = new Date().toISOString().slice(0, 10);
    const report = await http
      .get('/api/reports')
      .query({ periodStart: `${day}T00:00:00Z`, periodEnd: new Date(Date.now() + 1000).toISOString() })
      .query({ filters: 'tags.key[eq]=note' })
      .set(c.auth);
    expect(report.status, JSON.stringify(report.body)).to.equal(200);
    expect(report.body.totals).to.deep.equal([
      {
        asset: 'BRL',
        inflows: { sum: { value: '40.00', asset: 'BRL', decimals: 2 }, count: 1 },
        outflows: { sum: { value: '40.00', asset: 'BRL', decimals: 2 }, count: 1 },
      },
    ]);
    await assertLedgerBalanced();
  });
});
