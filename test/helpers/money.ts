import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { eventually, idem, stack, TestCustomer } from './stack';

/** POST a quote and return its body, failing loudly on anything but 201. */
export async function quote(c: TestCustomer, body: Record<string, unknown>) {
  const { http } = await stack();
  const res = await http.post('/api/quotes').set(c.auth).set(idem()).send(body);
  if (res.status !== 201) throw new Error(`quote failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function getOp(c: TestCustomer, id: string) {
  const { http } = await stack();
  return (await http.get(`/api/operations/${id}`).set(c.auth)).body;
}

export const untilStatus = (c: TestCustomer, id: string, status: string, timeoutMs = 20000) =>
  eventually(
    () => getOp(c, id),
    (op) => op.currentState?.status === status,
    timeoutMs,
  );

/**
 * Funds an account the way money really arrives: a deposit paid through a rail and reconciled. Stablecoins
 * arrive through CRYPTO, BRL through PIX, other fiat as BRL paid by PIX and converted at a fixed target.
 */
export async function fund(c: TestCustomer, accountId: string, asset: string, value: string) {
  const { http } = await stack();
  const crypto = ['USDC', 'USDT', 'EURC', 'BRLT'].includes(asset);
  const paidIn = crypto || asset === 'BRL' ? asset : 'BRL';
  const q = await quote(c, { accountId, sourceAsset: paidIn, targetAsset: asset, targetAmount: value });
  const dep = await http
    .post('/api/operations/deposit')
    .set(c.auth)
    .set(idem())
    .send({ accountId, quoteId: q.id, fundingInstruction: { rail: crypto ? 'CRYPTO' : 'PIX_KEY' } });
  if (dep.status !== 201) throw new Error(`deposit failed: ${dep.status} ${JSON.stringify(dep.body)}`);
  const paid = await http
    .post(`/api/sandbox/operations/${dep.body.id}/inbound-payment`)
    .set(c.auth)
    .set(idem())
    .send({ amount: { value: q.sourceAmount.value, asset: q.sourceAmount.asset } });
  if (paid.status !== 200) throw new Error(`inbound payment failed: ${paid.status} ${JSON.stringify(paid.body)}`);
  await untilStatus(c, dep.body.id, 'COMPLETED');
}

export async function balance(c: TestCustomer, accountId: string, asset: string) {
  const { http } = await stack();
  const res = await http.get(`/api/accounts/${accountId}/balances`).set(c.auth);
  expect(res.status).to.equal(200);
  const b = res.body.balances.find((x: { asset: string }) => x.asset === asset);
  return { available: b.available.value as string, held: b.held.value as string, total: b.total.value as string };
}

/**
 * The ledger invariants: entries sum to zero per asset; each account's running balance equals the sum of
 * its entries per book; nothing is negative.
 */
export async function assertLedgerBalanced() {
  const { services } = await stack();
  const em = systemEm(services.orm);
  const unbalanced = await em.execute(
    `select asset, sum(amount)::text as s from ledger_entries group by asset having sum(amount) <> 0`,
  );
  expect(unbalanced, 'entries per asset sum to zero').to.deep.equal([]);
  const drift = await em.execute(`
    select b.account_id, b.asset from balances b
    left join (select account_id, asset,
                 coalesce(sum(amount) filter (where book = 'available'), 0) as available,
                 coalesce(sum(amount) filter (where book = 'held'), 0) as held
               from ledger_entries where account_id is not null group by account_id, asset) e
      on e.account_id = b.account_id and e.asset = b.asset
    where b.available <> coalesce(e.available, 0) or b.held <> coalesce(e.held, 0)`);
  expect(drift, 'balances equal their entries').to.deep.equal([]);
  const negative = await em.execute(`select account_id from balances where available < 0 or held < 0`);
  expect(negative).to.deep.equal([]);
}
