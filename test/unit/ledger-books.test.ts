import { expect } from 'chai';
import { receivePostings, settlePostings, type PostedOperation } from '../../domain/postings';
import { Dec } from '../../domain/money';

const withdrawal = (rail: string | undefined, asset: string): PostedOperation => ({
  type: 'WITHDRAWAL',
  customerId: 'c',
  accountId: 'a',
  targetAccountId: null,
  sourceAsset: asset,
  sourceAmount: new Dec('10'),
  targetAsset: asset,
  targetAmount: new Dec('10'),
  fees: [],
  intent: rail === undefined ? { type: 'WITHDRAWAL' } : { beneficiary: { paymentInstruction: { rail } } },
});

const worldLeg = (op: PostedOperation) => settlePostings(op).find((p) => p.accountId === null)!;

describe('the outside world, one book per rail', () => {
  it('a withdrawal leaves through the book its rail brings money in from', () => {
    for (const [rail, asset] of [
      ['PIX_KEY', 'BRL'],
      ['CRYPTO', 'USDC'],
    ]) {
      const inbound = receivePostings({ customerId: 'c', rail, asset, amount: new Dec('10') })[0].book;
      const out = worldLeg(withdrawal(rail, asset));
      expect(out.book, rail).to.equal(inbound);
      expect(out.amount.toFixed(), rail).to.equal('10');
    }
  });

  it('a withdrawal whose intent names no rail (from before instructions named one) keeps the book it had', () => {
    expect(worldLeg(withdrawal(undefined, 'BRL')).book).to.equal('world:pix');
  });
});
