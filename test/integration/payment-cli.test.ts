// Operators resolve unmatched payments with the CLI (docs/decisions.md, "Inbound payments"): return them through
// their rail or credit them to an account, as the customer then sees in balances, operations, events and reports.
import { expect } from 'chai';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { suspenseAccountId } from '../../domain/postings';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, getOp } from '../helpers/money';
import { newCustomer, stack } from '../helpers/stack';
import { openDeposit, pay } from '../helpers/inbound-payments';
import { cambio, cambioFails } from '../helpers/cli';

/** The customer's suspense: its ledger account's balance row. */
async function suspense(customerId: string): Promise<string> {
  const { services } = await stack();
  const sql = `select coalesce(sum(available), 0)::numeric(38,2)::text as s from balances where account_id = ?`;
  const [row] = await systemEm(services.orm).execute(sql, [suspenseAccountId(customerId)]);
  return row.s;
}

describe('operator CLI: inbound payments', function () {
  this.timeout(120000);

  it('lists, returns and credits unmatched payments; matched is 409, unknown 404, a disabled asset 422', async () => {
    const { http } = await stack();
    const c = await newCustomer('Suspense Ltda');
    const account = await activeAccount(c, ['BRL']);
    const usdOnly = await activeAccount(c, ['USD']);
    const twice = await openDeposit(c, account.id, '50.00');
    const matched = await pay(c, twice.id, '50.00');
    const extra = await pay(c, twice.id, '50.00');
    const other = await openDeposit(c, account.id, '20.00');
    await pay(c, other.id, '20.00');
    const extra2 = await pay(c, other.id, '20.00');
    const statuses = [matched.body.status, extra.body.status, extra2.body.status];
    expect(statuses).to.deep.equal(['MATCHED', 'UNMATCHED', 'UNMATCHED']);
    expect(await suspense(c.customerId)).to.equal('70.00');
    const before = await balance(c, account.id, 'BRL');

    const json = async (...args: string[]) => JSON.parse((await cambio(...args, '--json')).stdout);
    const listed = await json('payment', 'list', '--customer', c.customerId, '--status', 'UNMATCHED');
    expect(listed.map((p: { id: string }) => p.id)).to.deep.equal([extra2.body.id, extra.body.id]);

    const returned = await json('payment', 'return', extra.body.id, '--reason', 'paid twice');
    expect(returned).to.deep.include({ id: extra.body.id, status: 'RETURNED' });
    expect(returned.returned.reason).to.equal('paid twice');
    expect(returned.returned.endToEndId)
      .to.match(/^E12345678\d{12}[0-9a-f]{11}$/)
      .and.not.equal(extra.body.endToEndId);
    expect(await suspense(c.customerId)).to.equal('20.00');

    const refused = await cambioFails('payment', 'return', matched.body.id, '--reason', 'no');
    expect([refused.exitCode, refused.body.code]).to.deep.equal([1, 'INVALID_STATE']);
    const notEnabled = await cambioFails('payment', 'credit', extra2.body.id, '--account', usdOnly.id);
    expect(notEnabled.body.code).to.equal('ASSET_NOT_ENABLED');
    const unknown = await cambioFails('payment', 'credit', randomUUID(), '--account', account.id);
    expect(unknown.body.code).to.equal('NOT_FOUND');

    const credited = await json('payment', 'credit', extra2.body.id, '--account', account.id);
    // The facts stay (the deposit it arrived for); the credit is the resolution's.
    expect(credited.payment).to.deep.include({ status: 'CREDITED', operationId: other.id, accountId: account.id });
    expect(credited.payment.amount.value).to.equal('20.00');
    expect(credited.payment.credit).to.deep.equal({ operationId: credited.operation.id, accountId: account.id });
    const op = await getOp(c, credited.operation.id);
    expect(op.intent.type).to.equal('DEPOSIT');
    expect(op.states.map((s: { status: string }) => s.status)).to.deep.equal(['REQUESTED', 'PROCESSING', 'COMPLETED']);
    expect(op.targetAmount).to.deep.equal({ value: '20.00', asset: 'BRL', decimals: 2 });
    expect(op.transactions).to.have.length(1);
    expect(op.transactions[0]).to.deep.include({ id: extra2.body.id, direction: 'CREDIT', status: 'COMPLETED' });
    expect((await balance(c, account.id, 'BRL')).available).to.equal(new Decimal(before.available).plus(20).toFixed(2));
    expect(await suspense(c.customerId)).to.equal('0.00');
    const { services } = await stack();
    const eventsSql = `select type from events where resource_id = ? order by created_at`;
    const events = (await systemEm(services.orm).execute(eventsSql, [op.id])) as Array<{ type: string }>;
    expect(events.map((e) => e.type)).to.deep.equal(['OPERATION_REQUESTED', 'OPERATION_COMPLETED']);
    const start = new Date(Date.now() - 3600_000).toISOString();
    const end = new Date(Date.now() + 3600_000).toISOString();
    const query = { periodStart: start, periodEnd: end, filters: `account.id[eq]=${account.id}` };
    const report = await http.get('/api/reports').query(query).set(c.auth);
    const inflows = { sum: { value: '90.00', asset: 'BRL', decimals: 2 }, count: 3 };
    expect(report.body.totals).to.deep.equal([{ asset: 'BRL', inflows }]);
    const again = await cambioFails('payment', 'credit', extra2.body.id, '--account', account.id);
    expect(again.body.code).to.equal('INVALID_STATE');
    await assertLedgerBalanced();
  });
});

describe('operator CLI: deposit pay', function () {
  this.timeout(120000);

  it('needs the rail reference, and run twice with it records the money once', async () => {
    const c = await newCustomer('Rerun Ltda');
    const account = await activeAccount(c, ['BRL']);
    const dep = await openDeposit(c, account.id, '30.00');
    const args = ['deposit', 'pay', dep.id, '--amount', '30.00', '--asset', 'BRL'];
    const noRef = await cambio(...args).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(noRef?.code, 'without --end-to-end').to.equal(1);
    expect(noRef?.stderr).to.include('--end-to-end');
    expect(await suspense(c.customerId), 'nothing recorded').to.equal('0.00');

    const ref = `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;
    const first = JSON.parse((await cambio(...args, '--end-to-end', ref, '--json')).stdout);
    const again = JSON.parse((await cambio(...args, '--end-to-end', ref, '--json')).stdout);
    expect(first).to.deep.include({ status: 'MATCHED', endToEndId: ref });
    expect(again).to.deep.include({ id: first.id, status: 'MATCHED' });
    const { http } = await stack();
    const list = await http
      .get('/api/inbound-payments')
      .query({ filters: `operationId[eq]=${dep.id}` })
      .set(c.auth);
    expect(list.body.data.map((p: { id: string }) => p.id)).to.deep.equal([first.id]);
    expect((await balance(c, account.id, 'BRL')).available).to.equal('30.00');
    expect(await suspense(c.customerId)).to.equal('0.00');
    await assertLedgerBalanced();
  });
});
