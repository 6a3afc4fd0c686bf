// The books close (decision 0076): after a race of concurrent, excess, short and late
// payments, per asset, received = credited by deposits + unmatched + returned + credited by operators, in the
// customer's views and in the ledger.
import { expect } from 'chai';
import { presentOperation } from '../../presenters/operation';
import Decimal from 'decimal.js';
import { systemEm } from '../../db/orm';
import { suspenseAccountId } from '../../domain/postings';
import { creditPayment, returnPayment } from '../../services/inbound-payment-resolution';
import { checkBooks } from '../../payments/books-check';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, getOp, untilStatus } from '../helpers/money';
import { eventually, newCustomer, stack, TestCustomer } from '../helpers/stack';
import { openDeposit, pay, spiEndToEndId } from '../helpers/inbound-payments';

type Kind = 'exact' | 'excess' | 'short' | 'late';

interface Payment {
  id: string;
  status: string;
  operationId: string | null;
  remainderOf: string | null;
  amount: { value: string };
  matchedAmount: { value: string } | null;
}

/** What a payment counts for in its state: of a MATCHED one that was split, the part its deposit used. */
const counted = (p: Payment) => (p.status === 'MATCHED' && p.matchedAmount ? p.matchedAmount : p.amount).value;

/** Runs `fn` over `items`, `width` at a time (a customer's in-flight and queue limits stay far away). */
async function inBatches<T>(items: T[], width: number, fn: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

async function allPayments(c: TestCustomer): Promise<Payment[]> {
  const { http } = await stack();
  const out: Payment[] = [];
  let cursor: string | undefined;
  do {
    const query = { limit: 100, ...(cursor ? { cursor } : {}) };
    const res = await http.get('/api/inbound-payments').query(query).set(c.auth);
    expect(res.status).to.equal(200);
    out.push(...res.body.data);
    cursor = res.body.meta.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

const sum = (values: string[]) => values.reduce((s, v) => s.plus(v), new Decimal(0)).toFixed(2);

describe('the books close after a race of payments', function () {
  this.timeout(240000);

  it('50 deposits, 2-3 concurrent payments each, excess, short, late and after the replay window', async () => {
    const c = await newCustomer('Race Ltda');
    const account = await activeAccount(c, ['BRL']);
    const kinds = (kind: Kind, n: number): Kind[] => Array(n).fill(kind);
    const plan: Kind[] = [...kinds('exact', 20), ...kinds('excess', 10), ...kinds('short', 10), ...kinds('late', 10)];
    const deposits: Array<{ id: string; kind: Kind; value: string; i: number }> = [];
    await inBatches(
      plan.map((kind, i) => ({ kind, i })),
      10,
      async ({ kind, i }) => {
        const value = new Decimal(10 + i).toFixed(2);
        // Short deposits get a 4 s replay window (it closes during the test); late ones expire after 1 s.
        const windows = kind === 'late' ? { deposit: 1, replay: 1 } : { deposit: 120, replay: 4 };
        deposits.push({ id: (await openDeposit(c, account.id, value, windows)).id, kind, value, i });
      },
    );

    const sent: string[] = [];
    const send = async (operationId: string, value: string) => {
      const res = await pay(c, operationId, value, { endToEndId: spiEndToEndId() });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.status).to.be.oneOf(['MATCHED', 'UNMATCHED']);
      sent.push(value);
    };
    const amounts = (d: { kind: Kind; value: string }, n: number): string[] => {
      const v = new Decimal(d.value);
      if (d.kind === 'exact') return Array(n).fill(d.value);
      // Every payment covers the quote, so whichever the workflow decides first completes the deposit.
      if (d.kind === 'excess') return [v.times(1.5).toFixed(2), d.value, v.times(1.2).toFixed(2)].slice(0, n);
      return Array(n).fill(v.times(0.3).toFixed(2)); // short (and late: whatever comes)
    };
    await Promise.all(deposits.filter((d) => d.kind === 'late').map((d) => untilStatus(c, d.id, 'FAILED')));
    // The race: every deposit's payments at once (2 or 3 each), several deposits at a time.
    await inBatches(deposits, 6, async (d) => {
      const n = 2 + (d.i % 2);
      await Promise.all(amounts(d, n).map((v) => send(d.id, v)));
    });
    // After the short deposits' replay windows: what counted toward them is unmatched, and so is a new payment.
    const shorts = deposits.filter((d) => d.kind === 'short');
    const ofShorts = (p: Payment) => shorts.some((d) => d.id === p.operationId);
    const stillMatched = async () => (await allPayments(c)).filter((p) => ofShorts(p) && p.status === 'MATCHED').length;
    await eventually(stillMatched, (n) => n === 0, 30000, 250);
    await Promise.all(shorts.slice(0, 5).map((d) => send(d.id, '2.00')));

    // Operators resolve some of the suspense: three returned, three credited.
    const { services } = await stack();
    const unmatched = (await allPayments(c)).filter((p) => p.status === 'UNMATCHED');
    expect(unmatched.length).to.be.at.least(30);
    for (const p of unmatched.slice(0, 3)) await returnPayment(services, p.id, 'race test');
    // A PIX return is RETURNING until the PSP confirms its devolucao; the books are read once it has.
    const returned = new Set(unmatched.slice(0, 3).map((p) => p.id));
    const returning = async () => (await allPayments(c)).filter((p) => returned.has(p.id) && p.status !== 'RETURNED');
    await eventually(returning, (left) => left.length === 0, 30000, 250);
    const credits = [];
    for (const p of unmatched.slice(3, 6)) credits.push(await creditPayment(services, p.id, account.id));

    const payments = await allPayments(c);
    const by = (status: string) => sum(payments.filter((p) => p.status === status).map(counted));
    const received = sum(sent);
    expect(payments.filter((p) => !p.remainderOf)).to.have.length(sent.length);
    const accounted = new Decimal(by('MATCHED'))
      .plus(by('UNMATCHED'))
      .plus(by('RETURNED'))
      .plus(by('CREDITED'))
      .toFixed(2);
    expect(accounted, 'received = matched + unmatched + returned + credited').to.equal(received);

    // Each deposit: COMPLETED exactly when its matched payments cover its quote, and then exactly that amount.
    for (const d of deposits) {
      const op = await getOp(c, d.id);
      const matchedTo = payments.filter((p) => p.operationId === d.id && p.status === 'MATCHED');
      const matched = sum(matchedTo.map(counted));
      const expected = d.kind === 'exact' || d.kind === 'excess' ? 'COMPLETED' : 'FAILED';
      expect(op.currentState.status, `${d.kind} deposit ${d.id}`).to.equal(expected);
      expect(matched, `${d.kind} deposit ${d.id} credited`).to.equal(expected === 'COMPLETED' ? d.value : '0.00');
    }
    const completing = deposits.filter((d) => d.kind === 'exact' || d.kind === 'excess');
    const creditedByDeposits = sum(completing.map((d) => d.value));
    expect(by('MATCHED')).to.equal(creditedByDeposits);
    expect(by('CREDITED')).to.equal(sum(credits.map((x) => presentOperation(x.operation).targetAmount.value)));

    // The ledger agrees: the account holds what deposits and operators credited, the suspense what is unmatched.
    const credited = new Decimal(creditedByDeposits).plus(by('CREDITED')).toFixed(2);
    expect((await balance(c, account.id, 'BRL')).available).to.equal(credited);
    const suspenseSql = `select coalesce(sum(available), 0)::numeric(38,2)::text as s from balances
      where account_id = ?`;
    const [row] = await systemEm(services.orm).execute(suspenseSql, [suspenseAccountId(c.customerId)]);
    expect(row.s, 'suspense = unmatched').to.equal(by('UNMATCHED'));
    const [world] = await systemEm(services.orm).execute(
      `select coalesce(-sum(e.amount), 0)::numeric(38,2)::text as s
       from ledger_entries e join ledger_transactions t on t.id = e.transaction_id
       where e.book like 'world:%' and t.key in (
         select 'inbound:' || id || ':' || k from inbound_payments, unnest(array['receive', 'return']) k where
           customer_id = ?)`,
      [c.customerId],
    );
    const net = new Decimal(received).minus(by('RETURNED')).toFixed(2);
    expect(world.s, 'net received through the rail = received - returned').to.equal(net);
    const books = await checkBooks(systemEm(services.orm), 'BRL');
    expect(books.assets[0].differences, 'cambio books check').to.deep.equal([]);
    await assertLedgerBalanced();
  });
});
