import { expect } from 'chai';
import { RailRejectedError } from '../../rails/errors';
import { CryptoPayouts } from '../../rails/crypto/payouts';
import type { HotWalletTransfers, TransferOrder } from '../../rails/crypto/transfers';

// A deployment's token may have fewer decimals than Cambio's 6: a payout it cannot carry exactly is refused before
// any transfer is ordered (the withdrawal FAILED, its hold released), never rounded.
describe('CRYPTO payouts in a token of other decimals', () => {
  const token = { asset: 'USDC' as const, address: '0x00000000000000000000000000000000000000aa' as const, decimals: 2 };
  const tokens = {
    token: async () => token,
    tokens: async () => [token],
    chainId: async () => 31337,
    network: 'ETHEREUM',
  };
  const payout = (amount: string) => ({
    payoutId: 'p1',
    amount,
    key: '0x00000000000000000000000000000000000000bb',
    asset: 'USDC',
  });

  function payoutsOrdering(orders: TransferOrder[], refused: string[] = []) {
    const transfers = {
      wallet: '0x00000000000000000000000000000000000000cc',
      // Nothing was ordered under a payout's id before: the connector goes on to a first send (decision 0209).
      status: async () => undefined,
      send: async (order: TransferOrder) => {
        orders.push(order);
        return { status: 'PENDING' as const };
      },
      // A refusal is recorded first, and no nonce was given meanwhile (decision 0344).
      refuseUnlessOrdered: async (id: string) => {
        refused.push(id);
        return undefined;
      },
    } as unknown as HotWalletTransfers;
    return new CryptoPayouts(tokens, transfers, async () => ({ logs: [] }));
  }

  it('refuses an amount the token cannot carry, and orders no transfer', async () => {
    const orders: TransferOrder[] = [];
    const refused: string[] = [];
    const failure = await payoutsOrdering(orders, refused)
      .sendPayout(payout('10.123456') as never)
      .catch((err: unknown) => err);
    expect(failure).to.be.instanceOf(RailRejectedError);
    expect((failure as Error).message).to.match(/USDC on this chain cannot carry 10\.123456/);
    expect(orders).to.have.length(0);
    expect(refused, 'the refusal recorded under the transfer id').to.deep.equal(['payout:p1']);
  });

  it('pays an amount it can carry in its own units', async () => {
    const orders: TransferOrder[] = [];
    await payoutsOrdering(orders).sendPayout(payout('10.120000') as never);
    expect(orders.map((o) => o.units)).to.deep.equal([1012n]);
  });
});
