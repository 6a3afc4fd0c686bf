import { expect } from 'chai';
import { ASSETS, assetDecimals } from '../../domain/assets';
import { activeAccount } from '../helpers/fixtures';
import { idem, newCustomer, stack } from '../helpers/stack';

describe('quotes', () => {
  it('quotes every one of the 20 assets against USD with amounts in each asset scale', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['USD']);
    for (const asset of ASSETS) {
      const res = await http
        .post('/api/quotes')
        .set(c.auth)
        .set(idem())
        .send({ accountId: account.id, sourceAsset: 'USD', targetAsset: asset, sourceAmount: '100.00' });
      expect(res.status, asset).to.equal(201);
      expect(res.body.targetAmount.asset).to.equal(asset);
      expect(res.body.targetAmount.decimals).to.equal(assetDecimals(asset));
      expect(res.body.targetAmount.value.split('.')[1]).to.have.length(assetDecimals(asset));
      expect(res.body.sourceAmount).to.deep.equal({ value: '100.00', asset: 'USD', decimals: 2 });
    }
  });

  it('answers with the spec shape: account reference, rate, expiry 30 s ahead', async () => {
    const { http } = await stack();
    const c = await newCustomer('Quote Shape SA');
    const account = await activeAccount(c, ['USD', 'BRL'], { legalName: 'Quote Shape SA' } as never);
    const before = Date.now();
    const res = await http
      .post('/api/quotes')
      .set(c.auth)
      .set(idem())
      .send({ accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '1000.00' });
    expect(res.status).to.equal(201);
    expect(res.body).to.include.keys(
      'id',
      'customerId',
      'account',
      'sourceAmount',
      'targetAmount',
      'effectiveRate',
      'expiresAt',
    );
    expect(res.body.customerId).to.equal(c.customerId);
    expect(res.body.account.id).to.equal(account.id);
    expect(res.body.account.owner).to.be.a('string').and.not.equal('');
    // The sandbox's table priced it (no RATES_SOURCES): it has no instant of its own.
    expect(res.body.effectiveRate).to.deep.equal({
      value: '5.373',
      base: 'USD',
      quote: 'BRL',
      source: 'table',
      sourceTime: null,
    });
    // 1000 × 5.40 × (1 − 0.005) = 5373.00, rounded down.
    expect(res.body.targetAmount).to.deep.equal({ value: '5373.00', asset: 'BRL', decimals: 2 });
    const ttl = new Date(res.body.expiresAt).getTime() - before;
    expect(ttl).to.be.within(29_000, 31_000);
  });

  it('fixes the target: source rounded up so the customer never gets more than the rate gives', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['USD', 'BRL']);
    const res = await http
      .post('/api/quotes')
      .set(c.auth)
      .set(idem())
      .send({ accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', targetAmount: '100.00' });
    expect(res.status).to.equal(201);
    // 100 / 5.373 = 18.6115...: rounded up to 18.62.
    expect(res.body.sourceAmount.value).to.equal('18.62');
    expect(res.body.targetAmount.value).to.equal('100.00');
  });

  it('quotes the same asset 1:1 with no spread, and a stablecoin against its peg at par', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const account = await activeAccount(c, ['USD', 'USDC']);
    const same = await http
      .post('/api/quotes')
      .set(c.auth)
      .set(idem())
      .send({ accountId: account.id, sourceAsset: 'USD', targetAsset: 'USD', sourceAmount: '10.50' });
    expect(same.body.effectiveRate.value).to.equal('1');
    expect(same.body.targetAmount.value).to.equal('10.50');
    const peg = await http
      .post('/api/quotes')
      .set(c.auth)
      .set(idem())
      .send({ accountId: account.id, sourceAsset: 'USD', targetAsset: 'USDC', sourceAmount: '10.50' });
    expect(peg.body.targetAmount).to.deep.equal({ value: '10.500000', asset: 'USDC', decimals: 6 });
  });

  describe('rejects', () => {
    const cases: Array<[string, Record<string, unknown>, number, string]> = [
      [
        'too many decimals for a 2-decimal asset',
        { sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '1.001' },
        400,
        'INVALID_AMOUNT_PRECISION',
      ],
      [
        'too many decimals for a 6-decimal asset',
        { sourceAsset: 'USDC', targetAsset: 'USD', sourceAmount: '1.0000001' },
        400,
        'INVALID_AMOUNT_PRECISION',
      ],
      ['a zero amount', { sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '0' }, 400, 'INVALID_AMOUNT'],
      ['a negative amount', { sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '-5.00' }, 400, 'INVALID_AMOUNT'],
      [
        'both amounts',
        { sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '1.00', targetAmount: '1.00' },
        400,
        'VALIDATION_ERROR',
      ],
      ['neither amount', { sourceAsset: 'USD', targetAsset: 'BRL' }, 400, 'VALIDATION_ERROR'],
      [
        'a number instead of a string',
        { sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: 10 },
        400,
        'VALIDATION_ERROR',
      ],
      ['an unknown asset', { sourceAsset: 'XYZ', targetAsset: 'BRL', sourceAmount: '1.00' }, 400, 'VALIDATION_ERROR'],
      [
        'an unknown property',
        { sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '1.00', rate: '9' },
        400,
        'VALIDATION_ERROR',
      ],
      [
        'an amount too small to buy anything',
        { sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '0.01' },
        400,
        'INVALID_AMOUNT',
      ],
    ];
    for (const [name, body, status, code] of cases) {
      it(name, async () => {
        const { http } = await stack();
        const c = await newCustomer();
        const account = await activeAccount(c, ['USD', 'BRL']);
        const res = await http
          .post('/api/quotes')
          .set(c.auth)
          .set(idem())
          .send({ accountId: account.id, ...body });
        expect(res.status).to.equal(status);
        expect(res.body.code).to.equal(code);
      });
    }

    it("another customer's account with 404", async () => {
      const { http } = await stack();
      const owner = await newCustomer();
      const account = await activeAccount(owner, ['USD', 'BRL']);
      const intruder = await newCustomer();
      const res = await http
        .post('/api/quotes')
        .set(intruder.auth)
        .set(idem())
        .send({ accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '1.00' });
      expect(res.status).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
      // Nothing was written for the intruder, and the owner's account has no quote from it either.
      const { services } = await stack();
      const rows = await services.orm.em
        .fork()
        .getConnection()
        .execute('select count(*)::int as n from quotes where account_id = ?', [account.id]);
      expect(rows[0].n).to.equal(0);
    });

    it(
      "another customer's account with 404 even when the amount is also invalid (the account is checked " + 'first)',
      async () => {
        const { http } = await stack();
        const owner = await newCustomer();
        const account = await activeAccount(owner, ['USD', 'BRL']);
        const intruder = await newCustomer();
        const res = await http
          .post('/api/quotes')
          .set(intruder.auth)
          .set(idem())
          .send({ accountId: account.id, sourceAsset: 'USD', targetAsset: 'BRL', sourceAmount: '1.001' });
        expect(res.status).to.equal(404);
        expect(res.body.code).to.equal('NOT_FOUND');
      },
    );
  });
});
