// Operators resolve unmatched payments with the CLI (decisions 0048, 0076): return them through
// their rail or credit them to an account, as the customer then sees in balances, operations, events and reports.
import { expect } from 'chai';
import { presentInboundPayment } from '../../presenters/inbound-payment';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { systemEm } from '../../db/orm';
import { suspenseAccountId } from '../../domain/postings';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, getOp, untilStatus } from '../helpers/money';
import { newCustomer, stack } from '../helpers/stack';
import { openDeposit, pay } from '../helpers/inbound-payments';
import { cambio, cambioFails, cambioFailsWith } from '../helpers/cli';
import { decideInboundPayment, recordInboundPayment } from '../../payments/record-and-decide';
import { failReturn, startReturn } from '../../services/inbound-payment-resolution';
import { Dec } from '../../domain/money';
import { recordManualPayment } from '../../services/reported-payments';
import type { CambioError } from '../../domain/errors';

/** The customer's suspense (null: the platform's): its ledger account's balance row. */
async function suspense(customerId: string | null, asset?: string): Promise<string> {
  const { services } = await stack();
  const sql = `select coalesce(sum(available), 0)::numeric(38,2)::text as s from balances where account_id = ?
    ${asset ? 'and asset = ?' : ''}`;
  const [row] = await systemEm(services.orm).execute(sql, [suspenseAccountId(customerId), ...(asset ? [asset] : [])]);
  return row.s;
}

/** `cambio books check --asset A --json`: exit code and whether the books close. */
async function booksCheck(asset: string): Promise<{ exitCode: number; ok: boolean; differences: string[] }> {
  const ran = await cambio('books', 'check', '--asset', asset, '--json').then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );
  const books = JSON.parse(ran.stdout);
  return {
    exitCode: ran.code,
    ok: books.ok,
    differences: books.assets.flatMap((a: { differences: string[] }) => a.differences),
  };
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

    // A PIX payment, and this CLI has no PSP: the operator states it went back at the bank (decision 0110;
    // payment-return-rail.test.ts has the rest).
    const reference = `BANK-${extra.body.id}`;
    const outside = ['--outside', '--reference', reference];
    const returned = await json('payment', 'return', extra.body.id, '--reason', 'paid twice', ...outside);
    expect(returned).to.deep.include({ id: extra.body.id, status: 'RETURNED' });
    expect(returned.returned.reason).to.equal('paid twice');
    expect(returned.returned.endToEndId).to.equal(reference).and.not.equal(extra.body.endToEndId);
    expect(await suspense(c.customerId)).to.equal('20.00');

    const refused = await cambioFails('payment', 'return', matched.body.id, '--reason', 'no', ...outside);
    expect([refused.exitCode, refused.body.code]).to.deep.equal([1, 'INVALID_STATE']);
    // Another customer's account is no account of the payment's customer: as unknown, and nothing moves.
    const stranger = await activeAccount(await newCustomer('Stranger Ltda'), ['BRL']);
    const elsewhere = await cambioFails('payment', 'credit', extra2.body.id, '--account', stranger.id);
    expect([elsewhere.exitCode, elsewhere.body.code]).to.deep.equal([1, 'NOT_FOUND']);
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

  it('a return outside whose completion Postgres refused: told to run it again, which completes it once', async () => {
    const { services } = await stack();
    const c = await newCustomer('Return Rerun Ltda');
    const account = await activeAccount(c, ['BRL']);
    const dep = await openDeposit(c, account.id, '15.00');
    await pay(c, dep.id, '15.00');
    const extra = await pay(c, dep.id, '15.00');
    expect(extra.body.status).to.equal('UNMATCHED');
    const args = ['payment', 'return', extra.body.id, '--reason', 'paid twice', '--outside', '--reference', 'BANK-R1'];
    // The suspense's balance row held elsewhere: the return's start commits, its completion (the posting) waits past
    // the CLI's lock_timeout, as when Postgres goes away between the two commits.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const hold = services.orm.em.fork().transactional(async (tx) => {
      const sql = 'select 1 from balances where account_id = ? and asset = ? for update';
      await tx.execute(sql, [suspenseAccountId(c.customerId), 'BRL']);
      held();
      await released;
    });
    await holding;
    const failure = await cambioFailsWith({ DB_LOCK_TIMEOUT_MS: '1000' }, ...args).finally(release);
    await hold;
    expect(failure.body.code, JSON.stringify(failure.body)).to.equal('SERVICE_UNAVAILABLE');
    expect(failure.body.details).to.deep.include({ recorded: true, rerun: true });
    expect(failure.body.message).to.contain('run the same command again');
    const json = async (...a: string[]) => JSON.parse((await cambio(...a, '--json')).stdout);
    expect((await json('payment', 'show', extra.body.id)).status).to.equal('RETURNING');
    expect(await suspense(c.customerId)).to.equal('15.00');

    const returned = await json(...args);
    expect(returned).to.deep.include({ id: extra.body.id, status: 'RETURNED' });
    const again = await cambioFails(...args);
    expect([again.body.code, again.body.details.status]).to.deep.equal(['INVALID_STATE', 'RETURNED']);
    expect(await suspense(c.customerId), 'the money left the suspense once').to.equal('0.00');
    await assertLedgerBalanced();
  });
});

// `deposit pay` records what the bank statement shows: a TED here, whose operators may always record (0303).
const BY_TED = { rail: 'TED', asset: 'BRL' } as const;

describe('operator CLI: deposit pay', function () {
  this.timeout(120000);

  // The stack has a PSP: a PIX deposit's payment is what the PSP records (its notice, read back, or reconciliation),
  // never what a person reports; reported, it would be a second record of the same Pix once the PSP's arrives.
  it("refuses a PIX deposit charged at the PSP: nothing recorded; the PSP's payment completes it once", async () => {
    const c = await newCustomer('Psp Recorded Ltda');
    const account = await activeAccount(c, ['BRL']);
    const dep = await openDeposit(c, account.id, '30.00');
    const ref = `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;
    const refused = await cambioFails(
      'deposit',
      'pay',
      dep.id,
      '--amount',
      '30.00',
      '--asset',
      'BRL',
      '--end-to-end',
      ref,
    );
    expect(refused.exitCode).to.equal(1);
    expect(refused.body.code).to.equal('VALIDATION_ERROR');
    expect(refused.body.message).to.contain('charged at its provider');
    expect(refused.body.details.errors[0].path).to.equal('--end-to-end');
    expect(await suspense(c.customerId), 'nothing recorded').to.equal('0.00');
    expect((await getOp(c, dep.id)).currentState.status).to.equal('REQUESTED');

    const paid = await pay(c, dep.id, '30.00');
    expect(paid.body.status, JSON.stringify(paid.body)).to.equal('MATCHED');
    const { http } = await stack();
    const list = await http
      .get('/api/inbound-payments')
      .query({ filters: `operationId[eq]=${dep.id}` })
      .set(c.auth);
    expect(list.body.data.map((p: { id: string }) => p.id)).to.deep.equal([paid.body.id]);
    await untilStatus(c, dep.id, 'COMPLETED');
    expect((await balance(c, account.id, 'BRL')).available).to.equal('30.00');
    await assertLedgerBalanced();
  });

  it('needs the rail reference, and run twice with it records the money once', async () => {
    const c = await newCustomer('Rerun Ltda');
    const account = await activeAccount(c, ['BRL']);
    const dep = await openDeposit(c, account.id, '30.00', undefined, BY_TED);
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

  it('reads --end-to-end as the API reads endToEndId: the reference with a space or a slash is refused', async () => {
    const c = await newCustomer('Pasted Ref Ltda');
    const account = await activeAccount(c, ['BRL']);
    const dep = await openDeposit(c, account.id, '30.00', undefined, BY_TED);
    const args = ['deposit', 'pay', dep.id, '--amount', '30.00', '--asset', 'BRL', '--json'];
    const ref = `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;
    const first = JSON.parse((await cambio(...args, '--end-to-end', ref)).stdout);
    expect(first).to.deep.include({ status: 'MATCHED', endToEndId: ref });
    // The same payment pasted again from the bank statement, with its trailing space or a path-like reference: the
    // API refuses either (400), so the CLI may not record it as another payment the bank never made.
    for (const typed of [`${ref} `, ` ${ref}`, `${ref}/1`, 'E'.repeat(65)]) {
      const refused = await cambioFails(...args, '--end-to-end', typed);
      expect(refused.exitCode, JSON.stringify(typed)).to.equal(1);
      expect(refused.body.code, JSON.stringify(typed)).to.equal('VALIDATION_ERROR');
      expect(refused.body.details.errors[0].path).to.equal('/endToEndId');
    }
    const { http } = await stack();
    const list = await http
      .get('/api/inbound-payments')
      .query({ filters: `operationId[eq]=${dep.id}` })
      .set(c.auth);
    expect(list.body.data.map((p: { id: string }) => p.id)).to.deep.equal([first.id]);
    expect((await balance(c, account.id, 'BRL')).available).to.equal('30.00');
    expect(await suspense(c.customerId), 'no second payment in the suspense').to.equal('0.00');
    await assertLedgerBalanced();
  });
});

describe("operator CLI: the platform's payments and a refused return", function () {
  // Five CLI processes: each takes seconds on a loaded machine.
  this.timeout(300000);

  // BRLT: no other test reports payments in it, so its books are this test's.
  it('credits a payment nobody could attribute, and takes a return the rail refused back to UNMATCHED', async () => {
    const { services } = await stack();
    const c = await newCustomer('Platform Credit Ltda');
    const account = await activeAccount(c, ['BRLT']);
    const json = async (...args: string[]) => JSON.parse((await cambio(...args, '--json')).stdout);
    // A rail reports two payments it can tie to no deposit nor customer: the platform's suspense holds them.
    const report = async (value: string) => {
      const ref = `E${randomUUID().replace(/-/g, '').slice(0, 31)}`;
      const em = systemEm(services.orm);
      const p = await recordInboundPayment(em, {
        endToEndId: ref,
        amount: new Dec(value),
        asset: 'BRLT',
        customerId: null,
        rail: 'CRYPTO',
      });
      await decideInboundPayment(services, p);
      return p.id;
    };
    const toCredit = await report('25.00');
    const toReturn = await report('7.00');
    expect(await suspense(null, 'BRLT')).to.equal('32.00');
    // Credited to a customer's account: from the platform's suspense through the customer's, into the account.
    const credited = await json('payment', 'credit', toCredit, '--account', account.id);
    expect(credited.payment).to.deep.include({ status: 'CREDITED', customerId: null, operationId: null });
    expect(credited.payment.credit).to.deep.equal({ operationId: credited.operation.id, accountId: account.id });
    const op = await getOp(c, credited.operation.id);
    expect(op.currentState.status).to.equal('COMPLETED');
    expect((await balance(c, account.id, 'BRLT')).available).to.equal('25.000000');
    expect(await suspense(null, 'BRLT')).to.equal('7.00');
    expect(await suspense(c.customerId, 'BRLT'), "nothing left in the customer's").to.equal('0.00');
    expect(await booksCheck('BRLT')).to.deep.include({ exitCode: 0, ok: true });

    // A return the rail refuses: RETURNING, then UNMATCHED again with the refusal; the money never left. CRYPTO
    // goes back through its connector (decision 0145); without a node here, an operator's return is at the bank.
    const returning = await startReturn(services, toReturn, 'unknown payer', undefined, { reference: 'BANK-R1' });
    expect(returning.status).to.equal('RETURNING');
    const refused = await failReturn(services, toReturn, 'beneficiary account closed');
    expect(refused.status).to.equal('UNMATCHED');
    expect(presentInboundPayment(refused).returned).to.deep.include({
      reason: 'unknown payer',
      failure: 'beneficiary account closed',
    });
    expect(await suspense(null, 'BRLT')).to.equal('7.00');
    expect(await booksCheck('BRLT')).to.deep.include({ exitCode: 0, ok: true });
    const twice = await failReturn(services, toReturn, 'again').catch((e: { code?: string }) => e.code);
    expect(twice, 'only a return in flight can fail').to.equal('INVALID_STATE');

    // The operator returns it once more (at the bank, by hand): RETURNED, out of the suspense.
    const byHand = ['--reason', 'returned by hand', '--outside', '--reference', 'BANK-R2'];
    const returned = await json('payment', 'return', toReturn, ...byHand);
    expect(returned).to.deep.include({ id: toReturn, status: 'RETURNED' });
    expect(returned.returned).to.deep.include({ reason: 'returned by hand', failure: null });
    expect(await suspense(null, 'BRLT')).to.equal('0.00');
    const books = await booksCheck('BRLT');
    expect(books, JSON.stringify(books.differences)).to.deep.include({ exitCode: 0, ok: true });
    await assertLedgerBalanced();
  });
});

describe('operator CLI: payment record (rails without a connector)', function () {
  this.timeout(180000);

  // The CLI run with only the database's settings lists BOLETO as a rail operators record (no bank here); a boleto the
  // bank registered is still paid by what the bank records (decision 0340).
  it('refuses a BOLETO deposit the bank registered, whatever the CLI process is configured with', async () => {
    const c = await newCustomer('Registered Boleto Ltda');
    const account = await activeAccount(c, ['BRL']);
    const dep = await openDeposit(c, account.id, '30.00', undefined, { rail: 'BOLETO', asset: 'BRL' });
    expect((await getOp(c, dep.id)).intent.fundingInstruction).to.have.property('seuNumero');
    const args = ['--rail', 'BOLETO', '--operation', dep.id, '--amount', '30.00', '--asset', 'BRL'];
    const refused = await cambioFails('payment', 'record', ...args, '--reference', `BOLETO-${randomUUID()}`);
    expect(refused.body.code).to.equal('VALIDATION_ERROR');
    expect(refused.body.message).to.contain('charged at its provider');
    expect(refused.body.details.errors[0].path).to.equal('--operation');
    expect(await suspense(c.customerId), 'nothing recorded').to.equal('0.00');
    expect((await getOp(c, dep.id)).currentState.status).to.equal('REQUESTED');
  });

  it('records for a deposit (matched) or a customer (unmatched), audited; one payment per reference', async () => {
    const { services } = await stack();
    const c = await newCustomer('Statement Ltda');
    const other = await newCustomer('Other Statement Ltda');
    const account = await activeAccount(c, ['BRL', 'USDC']);
    const dep = await openDeposit(c, account.id, '30.00', undefined, { rail: 'TED', asset: 'BRL' });
    const ted = `TED-${randomUUID()}`;
    const hash = `0x${randomUUID().replace(/-/g, '')}`;
    const record = (...args: string[]) => cambio('payment', 'record', ...args, '--json');

    const matched = JSON.parse(
      (await record('--rail', 'TED', '--operation', dep.id, '--amount', '30.00', '--asset', 'BRL', '--reference', ted))
        .stdout,
    );
    expect(matched).to.deep.include({ status: 'MATCHED', rail: 'TED', endToEndId: ted, operationId: dep.id });
    expect((await getOp(c, dep.id)).currentState.status).to.equal('COMPLETED');
    // The decision that reached the deposit names the operator who recorded it.
    const decisions = (await systemEm(services.orm).execute('select actor from workflow_decisions where target = ?', [
      matched.id,
    ])) as Array<{ actor: string }>;
    expect(decisions).to.have.length(1);
    expect(decisions[0].actor).to.match(/^operator:./);
    expect((await balance(c, account.id, 'BRL')).available).to.equal('30.00');

    const args = ['--rail', 'CRYPTO', '--amount', '5.00', '--asset', 'USDC', '--reference', hash];
    const unmatched = JSON.parse((await record(...args, '--customer', c.customerId)).stdout);
    expect(unmatched).to.deep.include({ status: 'UNMATCHED', rail: 'CRYPTO', customerId: c.customerId });
    expect(unmatched.operationId).to.equal(null);

    // The same reference for another customer: refused, nothing recorded for it.
    const taken = await cambioFails('payment', 'record', ...args, '--customer', other.customerId);
    expect([taken.exitCode, taken.body.code]).to.deep.equal([1, 'RAIL_REFERENCE_IN_USE']);
    const em = systemEm(services.orm);
    const ofHash = await em.execute(`select customer_id from inbound_payments where end_to_end_id = ?`, [hash]);
    expect(ofHash).to.deep.equal([{ customer_id: c.customerId }]);

    const audited = (await em.execute(
      `select target, details->>'outcome' as outcome from audit_log where action = 'payment.record'
       and target in (?, ?) order by at`,
      [`TED:${ted}`, `CRYPTO:${hash}`],
    )) as Array<{ target: string; outcome: string }>;
    expect(audited).to.deep.equal([
      { target: `TED:${ted}`, outcome: 'OK' },
      { target: `CRYPTO:${hash}`, outcome: 'OK' },
      { target: `CRYPTO:${hash}`, outcome: 'RAIL_REFERENCE_IN_USE' },
    ]);

    // PIX comes from the PSP; the rail must be the deposit's (checked before anything is recorded).
    const pix = await recordManualPayment(
      services,
      {
        rail: 'PIX_KEY',
        customerId: c.customerId,
        amount: '1.00',
        asset: 'BRL',
        reference: `E${randomUUID()}`,
      },
      'operator:test',
    ).catch((e: CambioError) => e);
    expect((pix as CambioError).code).to.equal('VALIDATION_ERROR');
    const wrongRail = await recordManualPayment(
      services,
      {
        rail: 'BOLETO',
        operationId: dep.id,
        amount: '1.00',
        asset: 'BRL',
        reference: `B-${randomUUID()}`,
      },
      'operator:test',
    ).catch((e: CambioError) => e);
    expect((wrongRail as CambioError).code).to.equal('VALIDATION_ERROR');
    await assertLedgerBalanced();
  });
});
