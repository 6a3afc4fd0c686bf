// One wallet address takes each stablecoin it is paid in as an instruction of its own (decision 0176): a withdrawal
// pays an instruction in its own asset, so refusing USDT at an address already saved for USDC left no way to pay it.
import { expect } from 'chai';
import { beneficiaryBody } from '../helpers/beneficiary-fixtures';
import { idem, newCustomer, stack } from '../helpers/stack';

const wallet = (asset: string, address = '0x' + 'ab'.repeat(20)) => ({
  type: 'WALLET',
  asset,
  network: 'ETHEREUM',
  address,
});

describe('beneficiaries: one wallet address, several stablecoins', function () {
  this.timeout(60000);

  it('adds USDT at an address saved for USDC; the same coin twice at one address is still 409', async () => {
    const { http } = await stack();
    const c = await newCustomer();
    const created = await http
      .post('/api/beneficiaries')
      .set(c.auth)
      .set(idem())
      .send(beneficiaryBody(wallet('USDC')));
    expect(created.status).to.equal(201);
    const add = (body: object) =>
      http.post(`/api/beneficiaries/${created.body.id}/payment-instructions`).set(c.auth).set(idem()).send(body);

    const usdt = await add(wallet('USDT'));
    expect(usdt.status, JSON.stringify(usdt.body)).to.equal(201);
    expect(usdt.body.paymentInstructions.map((p: { asset: string }) => p.asset)).to.deep.equal(['USDC', 'USDT']);

    // The same address in upper case is the same address (stored checksummed).
    const again = await add(wallet('USDC', '0x' + 'AB'.repeat(20)));
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('INVALID_STATE');
  });
});
