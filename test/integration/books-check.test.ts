// `cambio books check` (decision 0076): the books close by a command an operator runs at
// any time. The books case: two customers report one end-to-end id, the CLI is run twice, a CLI process is killed
// between recording a payment and having it decided, a return is left in flight; the check passes throughout,
// and fails (exit 1) when the ledger's suspense is tampered with.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { startReturn } from '../../services/inbound-payment-resolution';
import { suspenseAccountId } from '../../domain/postings';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, untilStatus } from '../helpers/money';
import { newCustomer, stack } from '../helpers/stack';
import { openDeposit, paymentsOf } from '../helpers/inbound-payments';
import { cambio, cambioFails, cambioKilledAt } from '../helpers/cli';

const e2e = () => `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;
const CRYPTO_EURC = { rail: 'CRYPTO' as const, asset: 'EURC' };

interface Books {
  ok: boolean;
  assets: Array<{ asset: string; records: Record<string, string>; ledger: Record<string, string>; differences: [] }>;
}

/** `cambio books check --asset EURC --json`: this file's payments are the only EURC ones of the run. */
async function booksCheck(): Promise<{ exitCode: number; books: Books }> {
  const ran = await cambio('books', 'check', '--asset', 'EURC', '--json').then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  expect(ran.stdout, ran.stderr).to.not.equal('');
  return { exitCode: ran.code, books: JSON.parse(ran.stdout) };
}

describe('cambio books check', function () {
  this.timeout(180000);

  it('passes after a duplicate reference across customers, CLI reruns, a crash and a return in flight', async () => {
    const { services } = await stack();
    const a = await newCustomer('Books A Ltda');
    const b = await newCustomer('Books B Ltda');
    const accountA = await activeAccount(a, ['EURC']);
    const accountB = await activeAccount(b, ['EURC']);
    const json = async (...args: string[]) => JSON.parse((await cambio(...args, '--json')).stdout);
    const pay = (depositId: string, value: string, ref: string) =>
      json('deposit', 'pay', depositId, '--amount', value, '--asset', 'EURC', '--end-to-end', ref);

    // Two customers report one reference: one payment, A's; B's report is refused and records nothing.
    const depA = await openDeposit(a, accountA.id, '10.00', undefined, CRYPTO_EURC);
    const depB = await openDeposit(b, accountB.id, '10.00', undefined, CRYPTO_EURC);
    const shared = e2e();
    const first = await pay(depA.id, '10.00', shared);
    expect(first).to.deep.include({ status: 'MATCHED', customerId: a.customerId, endToEndId: shared });
    const refused = await cambioFails(
      ...['deposit', 'pay', depB.id, '--amount', '10.00', '--asset', 'EURC', '--end-to-end', shared],
    );
    expect([refused.exitCode, refused.body.code]).to.deep.equal([1, 'RAIL_REFERENCE_IN_USE']);
    expect(JSON.stringify(refused.body), "nothing of A's payment is told").to.not.include(first.id);
    expect(await paymentsOf(b, `operationId[eq]=${depB.id}`)).to.deep.equal([]);

    // The CLI run twice with one reference: one payment.
    const ref = e2e();
    const once = await pay(depB.id, '10.00', ref);
    const twice = await pay(depB.id, '10.00', ref);
    expect(twice.id).to.equal(once.id);
    expect((await paymentsOf(b, `operationId[eq]=${depB.id}`)).map((p) => p.id)).to.deep.equal([once.id]);
    await untilStatus(b, depB.id, 'COMPLETED');

    // Killed between record and decide: the record and its decision's signal were committed together, in the
    // suspense; the books close whatever the moment, and the worker's relay has the deposit decide it.
    const depCrash = await openDeposit(a, accountA.id, '7.00', undefined, CRYPTO_EURC);
    const crashRef = e2e();
    const args = ['deposit', 'pay', depCrash.id, '--amount', '7.00', '--asset', 'EURC', '--end-to-end', crashRef];
    await cambioKilledAt('after-payment-record', ...args);
    const [orphan] = await paymentsOf(a, `operationId[eq]=${depCrash.id}`);
    expect(orphan).to.deep.include({ endToEndId: crashRef });
    let check = await booksCheck();
    expect(check.exitCode, JSON.stringify(check.books)).to.equal(0);
    expect(check.books.assets[0].records).to.deep.include({ received: '27.000000' });
    await untilStatus(a, depCrash.id, 'COMPLETED');
    // No rerun needed; one run again finds the record as decided.
    const rerun = await pay(depCrash.id, '7.00', crashRef);
    expect(rerun).to.deep.include({ id: orphan.id, status: 'MATCHED' });

    // An extra payment, then its return left in flight (RETURNING: still in the suspense).
    const extra = await pay(depCrash.id, '3.00', e2e());
    expect(extra.status).to.equal('UNMATCHED');
    // Returned at the bank by an operator (no node here: a CRYPTO return otherwise leaves through the connector).
    const returning = await startReturn(services, extra.id, 'paid twice', undefined, { reference: 'BANK-EXTRA' });
    expect(returning.status).to.equal('RETURNING');

    check = await booksCheck();
    expect(check.exitCode, JSON.stringify(check.books)).to.equal(0);
    expect(check.books.ok).to.equal(true);
    const [eurc] = check.books.assets;
    expect(eurc.asset).to.equal('EURC');
    expect(eurc.records).to.deep.include({
      received: '30.000000',
      matched: '27.000000',
      unmatched: '0.000000',
      returning: '3.000000',
      undecided: '0.000000',
      suspense: '3.000000',
    });
    expect(eurc.ledger).to.deep.include({
      received: '30.000000',
      matched: '27.000000',
      balance: '3.000000',
      entries: '3.000000',
    });
    expect(eurc.differences).to.deep.equal([]);

    // The return completes: out of the suspense, through the rail.
    const atTheBank = ['--outside', '--reference', 'BANK-EXTRA'];
    const returned = await json('payment', 'return', extra.id, '--reason', 'paid twice', ...atTheBank);
    expect(returned.status).to.equal('RETURNED');
    check = await booksCheck();
    expect(check.exitCode).to.equal(0);
    expect(check.books.assets[0].records).to.deep.include({
      returned: '3.000000',
      returning: '0.000000',
      suspense: '0.000000',
    });
    expect(check.books.assets[0].ledger).to.deep.include({ returned: '3.000000', balance: '0.000000' });

    // A suspense balance that disagrees with the records: exit 1, and the difference is named.
    const em = systemEm(services.orm);
    const tamper = `update balances set available = available + ? where account_id = ? and asset = 'EURC'`;
    await em.execute(tamper, ['1', suspenseAccountId(a.customerId)]);
    try {
      check = await booksCheck();
      expect(check.exitCode).to.equal(1);
      expect(check.books.ok).to.equal(false);
      expect(check.books.assets[0].differences.join('\n')).to.include('suspense');
    } finally {
      await em.execute(tamper, ['-1', suspenseAccountId(a.customerId)]);
    }
    expect((await booksCheck()).exitCode).to.equal(0);
    await assertLedgerBalanced();
  });

  it('refuses an --asset that names no asset: never "no payments" and exit 0 for books it did not read', async () => {
    // `eurc` is EURC to the operator, but no asset is stored so: the check read nothing and said the books close.
    for (const asset of ['eurc', 'EURC ', 'XYZ']) {
      const refused = await cambioFails('books', 'check', '--asset', asset, '--json');
      expect(refused.exitCode, asset).to.equal(1);
      expect(refused.body.code, asset).to.equal('VALIDATION_ERROR');
      expect(refused.body.details.errors[0].path).to.equal('--asset');
    }
  });
});
