// Adversarial edges of quotes as operations consume them: a quote that expires while its operation waits for it, a
// quote used by an operation of a kind it does not fit.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, fund, quote, untilStatus } from '../helpers/money';
import { idem, newCustomer, stack } from '../helpers/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('quote edges', function () {
  this.timeout(120000);

  it('a quote that expires while its swap waits for its row is 422 QUOTE_EXPIRED, and nothing is held', async () => {
    const { services, http } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['BRL', 'USD']);
    await fund(c, account.id, 'BRL', '100.00');
    const q = await quote(c, { accountId: account.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '10.00' });
    // The quote has a second left; another transaction holds its row (a racing operation that will roll back).
    await systemEm(services.orm).execute(`update quotes set expires_at = now() + interval '1 second' where id = ?`, [
      q.id,
    ]);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const holding = new Promise<void>((r) => (locked = r));
    const holder = systemEm(services.orm).transactional(async (tx) => {
      await tx.execute('select 1 from quotes where id = ? for update', [q.id]);
      locked();
      await released;
    });
    await holding;
    try {
      const swap = http
        .post('/api/operations/swap')
        .set(c.auth)
        .set(idem())
        .send({ accountId: account.id, quoteId: q.id })
        .then((r) => r);
      // The swap was sent while the quote was valid; the row is let go only once the quote has expired.
      await sleep(2000);
      release();
      await holder;
      const res = await swap;
      expect([res.status, res.body.code], JSON.stringify(res.body)).to.deep.equal([422, 'QUOTE_EXPIRED']);
    } finally {
      release();
      await holder.catch(() => undefined);
    }
    expect(await balance(c, account.id, 'BRL')).to.deep.equal({ available: '100.00', held: '0.00', total: '100.00' });
    await assertLedgerBalanced();
  });

  it('a 1:1 quote of one asset is refused by a swap and left for the transfer it was made for', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const [source, target] = [await activeAccount(c, ['BRL', 'USD']), await activeAccount(c, ['BRL'])];
    await fund(c, source.id, 'BRL', '100.00');
    const q = await quote(c, { accountId: source.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '40.00' });
    const swap = await http
      .post('/api/operations/swap')
      .set(c.auth)
      .set(idem())
      .send({ accountId: source.id, quoteId: q.id });
    expect([swap.status, swap.body.code]).to.deep.equal([400, 'VALIDATION_ERROR']);
    expect(swap.body.details.errors[0].path).to.equal('/quoteId');
    expect(await balance(c, source.id, 'BRL')).to.deep.equal({ available: '100.00', held: '0.00', total: '100.00' });
    const transfer = await http
      .post('/api/operations/transfer')
      .set(c.auth)
      .set(idem())
      .send({
        sourceAccountId: source.id,
        targetAccountId: target.id,
        amount: { value: '40.00', asset: 'BRL' },
        quoteId: q.id,
      });
    expect(transfer.status, JSON.stringify(transfer.body)).to.equal(201);
    expect(transfer.body.quote.id).to.equal(q.id);
    await untilStatus(c, transfer.body.id, 'COMPLETED');
    expect((await balance(c, target.id, 'BRL')).available).to.equal('40.00');
    await assertLedgerBalanced();
  });
});
