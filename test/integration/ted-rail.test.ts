// TED from the customer's own bank account (../shared/spec/decisions.md; decisions 0127-0129): the deposit shows the
// collection account and the CNPJ the TED must come from; the credits of that account are read from the simulated
// bank's Open Finance Accounts API v2 (real HTTP, pages of 2) by the TED poll, the rail's activity on its own queue,
// run by the Schedule's workflow; each credit is one payment, matched only from the owner's CNPJ for exactly the
// quote's amount, oldest open deposit first.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import supertest from 'supertest';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../config';
import { createActivities } from '../../activities';
import { createApp } from '../../api/app';
import { presentInboundPayment } from '../../presenters/inbound-payment';
import { systemEm } from '../../db/orm';
import { findPaymentByReference } from '../../db/repositories/inbound-payments';
import { reconciledSpan } from '../../db/repositories/rail-reconciliations';
import { reconcileRail } from '../../payments/reconciliation';
import { RAIL_ENTRIES, Rails } from '../../rails/registry';
import { tedRailFromConfig, TedRail } from '../../rails/ted';
import { cnpjCheckDigits } from '../../domain/tax-id';
import { readTedConfig, SANDBOX_TED_ACCOUNT } from '../../rails/ted/config';
import { ensureSchedules, periodicJobs } from '../../worker/schedules';
import { queueWorkerOptions } from '../../worker/queues';
import { cambio, cambioFailsWith, cambioWith } from '../helpers/cli';
import { GrpcStallProxy } from '../helpers/grpc-stall';
import { freePort } from '../helpers/processes';
import { accountBody, activeAccount, validAlphanumericCnpj, validCnpj } from '../helpers/fixtures';
import { balance, getOp, quote, untilStatus } from '../helpers/money';
import { idem, newCustomer, stack, type Stack, type TestCustomer } from '../helpers/stack';

const RAIL = RAIL_ENTRIES.find((e) => e.slug === 'ted')!.rail;

/** A TED rail whose bank lists exactly `entries` on one page (what a listing of odd entries makes of them). */
const listed = (entries: unknown[]) =>
  new TedRail(
    {
      get: async () => ({ status: 200, body: { data: entries, links: {}, meta: { totalPages: 1 } } }),
      close: async () => {},
    } as never,
    { accountId: 'cambio-collection', pageSize: 100, warn: () => {} },
  );

/** One TED credit of `amount` as the bank lists it, with `over`'s fields over it. */
const listedTed = (amount: string, over: Record<string, unknown>) => ({
  transactionId: `TED${randomUUID().replace(/-/g, '').toUpperCase()}`,
  type: 'TED',
  creditDebitType: 'CREDITO',
  transactionAmount: { amount, currency: 'BRL' },
  transactionDateTime: new Date().toISOString(),
  ...over,
});

describe('TED: credits read from the collection account', function () {
  this.timeout(120000);
  let st: Stack;
  let config: Config;
  let ted: TedRail;
  let http: ReturnType<typeof supertest>;
  let services: Stack['services'];
  let connection: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  const railsQueue = `cambio-test-ted-${randomUUID()}`;

  before(async () => {
    st = await stack();
    // The stack's simulated PSP is also the simulated bank (psp-simulator/bank-accounts/); pages of 2 make every
    // poll follow several. The Schedule runs hourly: the tests trigger its runs.
    const settings = readTedConfig({ SANDBOX: 'true', TED_ACCOUNTS_URL: `${st.psp.url}/open-finance` });
    config = { ...st.config, railsTaskQueue: railsQueue, ted: { ...settings, pageSize: 2, pollSeconds: 3600 } };
    ted = tedRailFromConfig(config)!;
    const rails = new Rails(RAIL_ENTRIES, [...st.services.rails!.all(), ted]);
    services = { ...st.services, config, rails };
    http = supertest(createApp(services).callback());
    connection = await NativeConnection.connect({ address: config.temporalAddress });
    const { orm, rates, temporal } = st.services;
    worker = await Worker.create({
      connection,
      namespace: config.temporalNamespace,
      taskQueue: railsQueue,
      activities: createActivities({ config, orm, rates, temporal, rails }),
      ...queueWorkerOptions('rails'),
    });
    running = worker.run();
    await ensureSchedules(
      temporal,
      config,
      periodicJobs(config).filter((j) => j.id.endsWith('-ted-reconciliation')),
    );
  });

  after(async () => {
    await st.services.temporal.schedule
      .getHandle(`${config.taskQueue}-ted-reconciliation`)
      .delete()
      .catch(() => undefined);
    worker.shutdown();
    await running;
    await connection.close();
    await ted.close();
  });

  /** One run of the TED poll as the Schedule starts it: the workflow, its activity on the rails' queue. */
  const poll = () =>
    st.services.temporal.workflow.execute('railReconciliationWorkflow', {
      taskQueue: config.taskQueue,
      workflowId: `ted-poll-${randomUUID()}`,
      args: [railsQueue, RAIL],
    }) as Promise<{ listed: number; late: number; known: number; failed: string[]; disagreeing: string[] }>;

  /** A TED the simulated bank books to the collection account (`listedAs`: fields its entry lists otherwise). */
  async function sendTed(payerTaxId: string, amount: string, listedAs?: Record<string, unknown>): Promise<string> {
    const booking = { payerTaxId, amount, accountId: config.ted.accountId, bankCode: '237', branchCode: '042' };
    const res = await fetch(`${st.psp.url}/sim/bank-accounts/credits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...booking, ...(listedAs ? { listedAs } : {}) }),
    });
    expect(res.status).to.equal(201);
    return ((await res.json()) as { transactionId: string }).transactionId;
  }

  async function bank(route: string, body: unknown) {
    const res = await fetch(`${st.psp.url}/sim/bank-accounts${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).to.be.lessThan(300);
  }

  const payment = async (transactionId: string) => {
    const found = await findPaymentByReference(systemEm(st.services.orm), RAIL, transactionId);
    return found && presentInboundPayment(found);
  };

  /** A customer whose account is owned by a CNPJ of its own. */
  async function owner(): Promise<{ c: TestCustomer; accountId: string; cnpj: string }> {
    const c = await newCustomer('Ted Owner Ltda');
    const cnpj = validCnpj();
    const account = await activeAccount(c, ['BRL'], { taxId: { value: cnpj, type: 'CNPJ' } });
    return { c, accountId: account.id, cnpj };
  }

  async function tedDeposit(c: TestCustomer, accountId: string, value: string, app = http) {
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
    return app
      .post('/api/operations/deposit')
      .set(c.auth)
      .set(idem())
      .send({ accountId, quoteId: q.id, fundingInstruction: { rail: RAIL } });
  }

  it("shows the collection account and the owner's CNPJ; 422 RAIL_NOT_CONFIGURED in production without", async () => {
    const { c, accountId, cnpj } = await owner();
    const res = await tedDeposit(c, accountId, '10.00');
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const { expiresAt, ...shown } = res.body.intent.fundingInstruction;
    expect(shown).to.deep.equal({ rail: RAIL, ...SANDBOX_TED_ACCOUNT, payerTaxId: cnpj });
    // The deposit window's end (decision 0318): a TED the bank receives after it completes no deposit.
    const windowMs = Date.parse(expiresAt) - Date.parse(res.body.createdAt);
    expect(windowMs).to.be.within(config.depositWindowSeconds * 1000, config.depositWindowSeconds * 1000 + 5000);
    const openapi = JSON.stringify((await http.get('/openapi.json')).body);
    expect(openapi).to.include('payerTaxId').and.to.include('holderTaxId');

    const production = {
      ...config,
      sandbox: false,
      ted: { ...config.ted, account: undefined, accountsUrl: undefined },
    };
    const live = supertest(createApp({ ...st.services, config: production }).callback());
    const refused = await tedDeposit(c, accountId, '10.00', live);
    expect([refused.status, refused.body.code]).to.deep.equal([422, 'RAIL_NOT_CONFIGURED']);
  });

  it("shows a collection holder's alphanumeric CNPJ with its letters; a value that is no CNPJ stops it", async () => {
    const { c, accountId } = await owner();
    const holder = validAlphanumericCnpj();
    const at = (from: number, to?: number) => holder.slice(from, to);
    const formatted = `${at(0, 2)}.${at(2, 5)}.${at(5, 8)}/${at(8, 12)}-${at(12)}`;
    const env = {
      TED_ACCOUNTS_URL: `${st.psp.url}/open-finance`,
      TED_ACCOUNT_ID: 'cambio-collection',
      TED_ACCOUNT_BANK_CODE: '341',
      TED_ACCOUNT_BRANCH: '0001',
      TED_ACCOUNT_NUMBER: '12345678',
      TED_ACCOUNT_DIGIT: '9',
      TED_ACCOUNT_HOLDER_NAME: 'Cambio Pagamentos Ltda',
    };
    const settings = readTedConfig({ ...env, TED_ACCOUNT_HOLDER_TAX_ID: formatted.toLowerCase() });
    const production = { ...config, sandbox: false, ted: { ...config.ted, ...settings } };
    const live = supertest(createApp({ ...st.services, config: production }).callback());
    const res = await tedDeposit(c, accountId, '10.00', live);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.intent.fundingInstruction.holderTaxId).to.equal(holder);

    const wrong = `${holder.slice(0, 13)}${(Number(holder[13]) + 1) % 10}`;
    for (const taxId of [wrong, '11222333', 'not a cnpj']) {
      const read = () => readTedConfig({ ...env, TED_ACCOUNT_HOLDER_TAX_ID: taxId });
      expect(read).to.throw(/TED_ACCOUNT_HOLDER_TAX_ID/);
    }
  });

  it("completes the oldest open deposit with a same-owner TED for exactly the quote's amount", async () => {
    const { c, accountId, cnpj } = await owner();
    const older = (await tedDeposit(c, accountId, '100.00')).body;
    const newer = (await tedDeposit(c, accountId, '100.00')).body;
    // The sandbox route sends the TED at the simulated bank; a poll records it. Sent "for" the newer deposit, it
    // completes the older one: a TED names no deposit, only its payer and amount.
    const sent = await http
      .post(`/api/sandbox/operations/${newer.id}/inbound-payment`)
      .set(c.auth)
      .set(idem())
      .send({ amount: { value: '100.00', asset: 'BRL' } });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body).to.deep.include({
      status: 'MATCHED',
      operationId: older.id,
      rail: RAIL,
      customerId: c.customerId,
    });
    expect(sent.body.payer).to.deep.include({ taxId: cnpj, personType: 'COMPANY' });
    await untilStatus(c, older.id, 'COMPLETED');
    expect((await getOp(c, newer.id)).currentState.status).to.equal('REQUESTED');

    const second = await sendTed(cnpj, '100.00');
    await poll();
    expect(await payment(second)).to.deep.include({ status: 'MATCHED', operationId: newer.id });
    await untilStatus(c, newer.id, 'COMPLETED');
    expect((await balance(c, accountId, 'BRL')).available).to.equal('200.00');
  });

  it('completes the open deposit, not an older one whose window had ended when the TED was received', async () => {
    const { c, accountId, cnpj } = await owner();
    const ended = (await tedDeposit(c, accountId, '101.00')).body;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const open = (await tedDeposit(c, accountId, '101.00')).body;
    // The bank lists the TED as received after the older deposit's window (a day) and within the newer's. The older
    // one is still REQUESTED, as when the worker that expires it is down or behind: its workflow waits its day.
    const windowMs = config.depositWindowSeconds * 1000;
    const receivedAt = new Date(Date.parse(ended.createdAt) + windowMs + 750).toISOString();
    const late = await sendTed(cnpj, '101.00', { transactionDateTime: receivedAt });
    await poll();
    expect(await payment(late)).to.deep.include({ status: 'MATCHED', operationId: open.id });
    await untilStatus(c, open.id, 'COMPLETED');
    expect((await getOp(c, ended.id)).currentState.status).to.equal('REQUESTED');
    expect((await balance(c, accountId, 'BRL')).available).to.equal('101.00');
  });

  it('waits after the window for a TED received within it, and takes none received after it', async () => {
    // A window of 12 s: the deposits wait a quarter of it (3 s) after their window for a poll late to list a TED
    // received within it (twice TED_POLL_SECONDS, capped at a quarter of the window: decision 0321).
    const shortWindow = supertest(
      createApp({ ...services, config: { ...config, depositWindowSeconds: 12 } }).callback(),
    );
    const { c, accountId, cnpj } = await owner();
    const paid = (await tedDeposit(c, accountId, '102.00', shortWindow)).body;
    const unpaid = (await tedDeposit(c, accountId, '103.00', shortWindow)).body;
    const windowEnd = Date.parse(paid.intent.fundingInstruction.expiresAt);
    const inTime = await sendTed(cnpj, '102.00', { transactionDateTime: new Date(windowEnd - 1000).toISOString() });
    // Received by the bank after both windows ended, while the deposits wait.
    const tooLate = new Date(Date.parse(unpaid.intent.fundingInstruction.expiresAt) + 100).toISOString();
    const late = await sendTed(cnpj, '103.00', { transactionDateTime: tooLate });
    // The poll runs half a second after the windows' end, as the Schedule's next run would.
    await new Promise((resolve) => setTimeout(resolve, Date.parse(tooLate) + 400 - Date.now()));
    await poll();
    expect(await payment(inTime)).to.deep.include({ status: 'MATCHED', operationId: paid.id });
    expect(await payment(late)).to.deep.include({ status: 'UNMATCHED', operationId: null });
    await untilStatus(c, paid.id, 'COMPLETED');
    await untilStatus(c, unpaid.id, 'FAILED');
    expect((await getOp(c, unpaid.id)).currentState.reason).to.include({ code: 'DEPOSIT_EXPIRED' });
    expect((await balance(c, accountId, 'BRL')).available).to.equal('102.00');
  });

  it('leaves a TED from another CNPJ, or a cent off, UNMATCHED with its payer shown to operators', async () => {
    const { c, accountId, cnpj } = await owner();
    const deposit = (await tedDeposit(c, accountId, '50.00')).body;
    const stranger = validCnpj();
    const fromStranger = await sendTed(stranger, '50.00');
    const centOff = await sendTed(cnpj, '50.01');
    await poll();
    // Nobody owns the stranger's CNPJ: the platform's suspense; the owner's cent-off TED: the customer's.
    expect(await payment(fromStranger)).to.deep.include({ status: 'UNMATCHED', customerId: null, operationId: null });
    expect(await payment(centOff)).to.deep.include({
      status: 'UNMATCHED',
      customerId: c.customerId,
      operationId: null,
    });
    expect((await getOp(c, deposit.id)).currentState.status).to.equal('REQUESTED');
    const shown = JSON.parse((await cambio('payment', 'show', (await payment(fromStranger))!.id, '--json')).stdout);
    expect(shown.payer).to.deep.equal({
      taxId: stranger,
      personType: 'COMPANY',
      bankCode: '237',
      branchCode: '042',
      accountNumber: '987654',
      accountDigit: '3',
    });
    expect((await balance(c, accountId, 'BRL')).available).to.equal('0.00');
  });

  it("says a TED an operator recorded for a deposit its payer does not own, not one for the owner's", async () => {
    const mine = await owner();
    const other = await owner();
    const deposit = (await tedDeposit(mine.c, mine.accountId, '80.00')).body;
    const own = (await tedDeposit(mine.c, mine.accountId, '81.00')).body;
    // The bank shows the other customer's TED of 80.00 and the owner's of 81.00; an operator records both from the
    // statement, the first against the wrong deposit (a TED must come from the deposit owner's own account).
    const theirs = await sendTed(other.cnpj, '80.00');
    const ours = await sendTed(mine.cnpj, '81.00');
    const record = (operationId: string, amount: string, reference: string) =>
      cambio(
        'payment',
        'record',
        '--rail',
        RAIL,
        '--operation',
        operationId,
        '--amount',
        amount,
        '--asset',
        'BRL',
        '--reference',
        reference,
        '--json',
      );
    await record(deposit.id, '80.00', theirs);
    await record(own.id, '81.00', ours);
    const run = await poll();
    // The first record stands (the money is credited); the poll says what the bank shows otherwise.
    expect(run.disagreeing).to.include(theirs);
    expect(run.disagreeing).not.to.include(ours);
    expect(await payment(theirs)).to.deep.include({ status: 'MATCHED', operationId: deposit.id });
  });

  // TED has no return call (decision 0129): with the bank configured, a return is still the operator's, at the bank,
  // recorded with --outside; never a return workflow no provider can answer (decision 0331).
  it('refuses a TED return without --outside though the bank is configured; records one with it', async () => {
    const { c, accountId } = await owner();
    await tedDeposit(c, accountId, '60.00');
    const stray = await sendTed(validCnpj(), '60.00');
    await poll();
    const found = (await payment(stray))!;
    expect(found.status).to.equal('UNMATCHED');
    const withBank = { SANDBOX: 'true', TED_ACCOUNTS_URL: `${st.psp.url}/open-finance` };
    const refused = await cambioFailsWith(withBank, 'payment', 'return', found.id, '--reason', 'unknown payer');
    expect(refused.body.code, JSON.stringify(refused.body)).to.equal('RAIL_NOT_CONFIGURED');
    expect(refused.body.message).to.match(/at the bank.*--outside --reference/);
    expect((await payment(stray))!.status, 'nothing changed').to.equal('UNMATCHED');
    const args = ['payment', 'return', found.id, '--reason', 'unknown payer', '--outside', '--reference', 'TED-BACK-1'];
    const returned = JSON.parse((await cambioWith(withBank, ...args, '--json')).stdout);
    expect(returned).to.deep.include({ id: found.id, status: 'RETURNED' });
  });

  it("leaves a TED from a CNPJ two customers' accounts share UNMATCHED in the platform's suspense", async () => {
    // Account creation does not stop a customer from naming another's CNPJ as its owner: the TED is neither's.
    const first = await owner();
    const second = await newCustomer('Ted Same Owner Ltda');
    const secondAccount = await activeAccount(second, ['BRL'], { taxId: { value: first.cnpj, type: 'CNPJ' } });
    const older = (await tedDeposit(first.c, first.accountId, '200.00')).body;
    const newer = (await tedDeposit(second, secondAccount.id, '200.00')).body;
    const id = await sendTed(first.cnpj, '200.00');
    await poll();
    expect(await payment(id)).to.deep.include({ status: 'UNMATCHED', customerId: null, operationId: null });
    expect((await getOp(first.c, older.id)).currentState.status).to.equal('REQUESTED');
    expect((await getOp(second, newer.id)).currentState.status).to.equal('REQUESTED');
    expect((await balance(first.c, first.accountId, 'BRL')).available).to.equal('0.00');
    expect((await balance(second, secondAccount.id, 'BRL')).available).to.equal('0.00');

    // The sandbox route's TED from that CNPJ lands there too; its answer is that record, which names no customer.
    const sent = await http
      .post(`/api/sandbox/operations/${older.id}/inbound-payment`)
      .set(first.c.auth)
      .set(idem())
      .send({ amount: { value: '200.00', asset: 'BRL' } });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body).to.deep.include({ status: 'UNMATCHED', customerId: null, operationId: null, accountId: null });
    expect((await getOp(second, newer.id)).currentState.status).to.equal('REQUESTED');
  });

  it("completes the owner's deposit though another customer holds an unapproved account under its CNPJ", async () => {
    // One POST /api/accounts naming a CNPJ (a public number in Brazil) must not stop its owner's TEDs reaching its
    // deposits: an account counts as the CNPJ's owner only once its review approved it (decision 0179).
    const first = await owner();
    const intruder = await newCustomer('Ted Intruder Ltda');
    const created = await http
      .post('/api/accounts')
      .set(intruder.auth)
      .set(idem())
      .send(accountBody({ assets: ['BRL'], taxId: { value: first.cnpj, type: 'CNPJ' } }));
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const deposit = (await tedDeposit(first.c, first.accountId, '70.00')).body;
    const id = await sendTed(first.cnpj, '70.00');
    await poll();
    expect(await payment(id)).to.deep.include({
      status: 'MATCHED',
      customerId: first.c.customerId,
      operationId: deposit.id,
    });
    await untilStatus(first.c, deposit.id, 'COMPLETED');
    expect((await balance(first.c, first.accountId, 'BRL')).available).to.equal('70.00');
    const seen = await http.get('/api/inbound-payments').set(intruder.auth);
    expect(seen.body.data).to.deep.equal([]);

    // Nor may that account's customer send a sandbox TED from the CNPJ: it would pay the owner's next deposit.
    const intruderAccount = await activeAccount(intruder, ['BRL'], { taxId: { value: validCnpj(), type: 'CNPJ' } });
    const next = (await tedDeposit(first.c, first.accountId, '71.00')).body;
    const own = (await tedDeposit(intruder, intruderAccount.id, '71.00')).body;
    const refused = await http
      .post(`/api/sandbox/operations/${own.id}/inbound-payment`)
      .set(intruder.auth)
      .set(idem())
      .send({ amount: { value: '71.00', asset: 'BRL' }, payerTaxId: first.cnpj });
    expect([refused.status, refused.body.code], JSON.stringify(refused.body)).to.deep.equal([400, 'VALIDATION_ERROR']);
    await poll();
    expect((await getOp(first.c, next.id)).currentState.status).to.equal('REQUESTED');
  });

  it("refuses a sandbox TED from another customer's CNPJ and books nothing; one from its own is sent", async () => {
    const mine = await owner();
    const other = await owner();
    const deposit = (await tedDeposit(mine.c, mine.accountId, '123.45')).body;
    const theirs = (await tedDeposit(other.c, other.accountId, '123.45')).body;
    const send = (payerTaxId: string) =>
      http
        .post(`/api/sandbox/operations/${deposit.id}/inbound-payment`)
        .set(mine.c.auth)
        .set(idem())
        .send({ amount: { value: '123.45', asset: 'BRL' }, payerTaxId });

    const refused = await send(other.cnpj);
    expect([refused.status, refused.body.code], JSON.stringify(refused.body)).to.deep.equal([400, 'VALIDATION_ERROR']);
    expect(refused.body.details.errors).to.have.length(1);
    expect(refused.body.details.errors[0].path).to.equal('/payerTaxId');
    await poll();
    const fromOther = await systemEm(st.services.orm).execute(
      `select count(*)::int as n from inbound_payments where rail = ? and payer ->> 'taxId' = ?`,
      [RAIL, other.cnpj],
    );
    expect(fromOther[0].n).to.equal(0);
    const booked = (await (await fetch(`${st.psp.url}/sim/bank-accounts/credits`)).json()) as {
      credits: { partieCnpjCpf: string }[];
    };
    expect(booked.credits.map((c) => c.partieCnpjCpf)).not.to.include(other.cnpj);
    expect((await getOp(other.c, theirs.id)).currentState.status).to.equal('REQUESTED');

    // Its own CNPJ, named explicitly (punctuated as a person would write it), is the default's TED.
    const c = mine.cnpj;
    const sent = await send(`${c.slice(0, 2)}.${c.slice(2, 5)}.${c.slice(5, 8)}/${c.slice(8, 12)}-${c.slice(12)}`);
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body).to.deep.include({ status: 'MATCHED', operationId: deposit.id, customerId: mine.c.customerId });
    await untilStatus(mine.c, deposit.id, 'COMPLETED');
    expect((await getOp(other.c, theirs.id)).currentState.status).to.equal('REQUESTED');
  });

  it("is 409 RAIL_REFERENCE_IN_USE, nothing said of it, for a sandbox TED naming another's transactionId", async () => {
    const mine = await owner();
    const other = await owner();
    const theirs = (await tedDeposit(other.c, other.accountId, '30.00')).body;
    const id = await sendTed(other.cnpj, '30.00');
    await poll();
    const recorded = await payment(id);
    expect(recorded).to.deep.include({ status: 'MATCHED', operationId: theirs.id, customerId: other.c.customerId });

    const deposit = (await tedDeposit(mine.c, mine.accountId, '30.00')).body;
    const res = await http
      .post(`/api/sandbox/operations/${deposit.id}/inbound-payment`)
      .set(mine.c.auth)
      .set(idem())
      .send({ amount: { value: '30.00', asset: 'BRL' }, endToEndId: id });
    expect([res.status, res.body.code], JSON.stringify(res.body)).to.deep.equal([409, 'RAIL_REFERENCE_IN_USE']);
    const answer = JSON.stringify(res.body);
    for (const theirId of [other.c.customerId, other.accountId, theirs.id, recorded!.id, other.cnpj]) {
      expect(answer).not.to.include(theirId);
    }
    expect((await getOp(mine.c, deposit.id)).currentState.status).to.equal('REQUESTED');

    // A stranger's TED in the platform's suspense is no more the customer's to see: it did not send it.
    const stranger = validCnpj();
    const strangers = await sendTed(stranger, '30.00');
    await poll();
    expect(await payment(strangers)).to.deep.include({ status: 'UNMATCHED', customerId: null });
    const named = await http
      .post(`/api/sandbox/operations/${deposit.id}/inbound-payment`)
      .set(mine.c.auth)
      .set(idem())
      .send({ amount: { value: '30.00', asset: 'BRL' }, endToEndId: strangers });
    expect([named.status, named.body.code], JSON.stringify(named.body)).to.deep.equal([409, 'RAIL_REFERENCE_IN_USE']);
    expect(JSON.stringify(named.body)).not.to.include(stranger);
  });

  it('records a duplicate transactionId, a page repeated across polls and two overlapping polls once', async () => {
    const { c, accountId, cnpj } = await owner();
    const deposit = (await tedDeposit(c, accountId, '10.00')).body;
    const id = await sendTed(cnpj, '10.00');
    await bank(`/credits/${id}/repeat`, {});
    await Promise.all([poll(), poll()]);
    await poll();
    const rows = await systemEm(st.services.orm).execute(
      'select count(*)::int as n from inbound_payments where rail = ? and end_to_end_id = ?',
      [RAIL, id],
    );
    expect(rows[0].n).to.equal(1);
    await untilStatus(c, deposit.id, 'COMPLETED');
    expect((await balance(c, accountId, 'BRL')).available).to.equal('10.00');
  });

  it('keeps the cursor where it was while the bank is down, and the retried poll records the TED', async () => {
    const { c, accountId, cnpj } = await owner();
    const deposit = (await tedDeposit(c, accountId, '20.00')).body;
    const id = await sendTed(cnpj, '20.00');
    const em = systemEm(st.services.orm);
    const before = await reconciledSpan(em, RAIL);
    await bank('/outage', { count: 1, status: 503 });
    const settle = { orm: st.services.orm, temporal: st.services.temporal, config };
    const failed = await reconcileRail(settle, ted).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failed?.name).to.equal('RailUnavailableError');
    expect(await reconciledSpan(em, RAIL)).to.deep.equal(before);
    expect(await payment(id)).to.equal(null);

    // Through the Schedule's workflow: the activity's first attempt meets the outage, its retry records the TED.
    await bank('/outage', { count: 1, status: 503 });
    await poll();
    expect(await payment(id)).to.deep.include({ status: 'MATCHED', operationId: deposit.id });
    await untilStatus(c, deposit.id, 'COMPLETED');
  });

  it('completes deposits paid from an alphanumeric CNPJ, and from one listed without its leading zero', async () => {
    // The alphanumeric CNPJ (IN RFB 2.229/2024) is in use since July 2026: its letters are the id, not punctuation.
    const alnum = validAlphanumericCnpj();
    const c = await newCustomer('Ted Alfanumerico Ltda');
    const account = await activeAccount(c, ['BRL'], { taxId: { value: alnum, type: 'CNPJ' } });
    const deposit = (await tedDeposit(c, account.id, '41.00')).body;
    expect(deposit.intent.fundingInstruction.payerTaxId).to.equal(alnum);
    // The bank writes it as it likes: punctuated, in lower case.
    const a = alnum;
    const written = `${a.slice(0, 2)}.${a.slice(2, 5)}.${a.slice(5, 8)}/${a.slice(8, 12)}-${a.slice(12)}`;
    const id = await sendTed(written.toLowerCase(), '41.00');
    await poll();
    expect(await payment(id)).to.deep.include({
      status: 'MATCHED',
      customerId: c.customerId,
      operationId: deposit.id,
    });
    await untilStatus(c, deposit.id, 'COMPLETED');
    expect((await balance(c, account.id, 'BRL')).available).to.equal('41.00');

    // The sandbox route's TED from the owner's own CNPJ, named as the owner writes it, completes the next one.
    const next = (await tedDeposit(c, account.id, '42.00')).body;
    const sent = await http
      .post(`/api/sandbox/operations/${next.id}/inbound-payment`)
      .set(c.auth)
      .set(idem())
      .send({ amount: { value: '42.00', asset: 'BRL' }, payerTaxId: written });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body).to.deep.include({ status: 'MATCHED', operationId: next.id });
    await untilStatus(c, next.id, 'COMPLETED');

    // A CNPJ starting with 0, which a bank writing it as a number lists with 13 digits.
    const base = `0${String(Math.floor(Math.random() * 1e11)).padStart(11, '1')}`;
    const zero = base + cnpjCheckDigits(base);
    const z = await newCustomer('Ted Zero Ltda');
    const zAccount = await activeAccount(z, ['BRL'], { taxId: { value: zero, type: 'CNPJ' } });
    const zDeposit = (await tedDeposit(z, zAccount.id, '43.00')).body;
    const zId = await sendTed(zero.slice(1), '43.00');
    await poll();
    expect(await payment(zId)).to.deep.include({ status: 'MATCHED', operationId: zDeposit.id });
    await untilStatus(z, zDeposit.id, 'COMPLETED');
  });

  it("records a TED naming no payer in the platform's suspense; one it cannot read keeps the window", async () => {
    const ted = (over: Record<string, unknown>) => listedTed('77.0000', over);
    const settle = { orm: st.services.orm, temporal: st.services.temporal, config };
    const em = systemEm(st.services.orm);

    // The Accounts API's partieCnpjCpf is conditional: a TED without it is money in Cambio's account all the same.
    const anonymous = ted({});
    const run = await reconcileRail(settle, listed([anonymous]));
    expect(run).to.deep.include({ listed: 1, late: 1, failed: [] });
    expect(await payment(anonymous.transactionId)).to.deep.include({
      status: 'UNMATCHED',
      customerId: null,
      operationId: null,
      payer: null,
    });
    expect((await payment(anonymous.transactionId))!.amount).to.deep.include({ value: '77.00', asset: 'BRL' });

    // A credit Cambio cannot read is the run's failure: the cursor stays and the next run lists it again.
    const before = await reconciledSpan(em, RAIL);
    const cents = ted({ transactionAmount: { amount: '12.3450', currency: 'BRL' }, partieCnpjCpf: validCnpj() });
    const noId = ted({ transactionId: undefined, partieCnpjCpf: validCnpj() });
    const unreadable = await reconcileRail(settle, listed([cents, noId]));
    expect(unreadable.failed).to.have.length(2);
    expect(unreadable.failed).to.include(cents.transactionId);
    expect(await payment(cents.transactionId)).to.equal(null);
    expect(await reconciledSpan(em, RAIL)).to.deep.equal(before);

    // The name a run gives such a credit is no transactionId: a payment an operator records under those words from
    // the run's result does not make the next nameless credit "known", skipped and the cursor moved past it.
    const named = await newCustomer('Ted Sem Id Ltda');
    const [reference] = unreadable.failed.filter((f) => f !== cents.transactionId);
    await cambio(
      ...['payment', 'record', '--rail', RAIL, '--customer', named.customerId, '--amount', '77.00'],
      ...['--asset', 'BRL', '--reference', reference],
    );
    const another = ted({ transactionId: undefined, transactionAmount: { amount: '501.00', currency: 'BRL' } });
    const again = await reconcileRail(settle, listed([another]));
    expect(again).to.deep.include({ listed: 1, known: 0, failed: [reference] });
    expect(await reconciledSpan(em, RAIL)).to.deep.equal(before);
  });

  it('a sandbox TED while Temporal stalls under the API is 503 within seconds, not a request that hangs', async () => {
    const { c, accountId } = await owner();
    const deposit = (await tedDeposit(c, accountId, '61.00')).body;
    // The API's Temporal takes its connection's first call, then nothing more (packets dropped, a frozen frontend).
    const [host, port] = config.temporalAddress.split(':');
    const proxy = new GrpcStallProxy(await freePort(), { host, port: Number(port) }, 1);
    await proxy.open();
    const connection = await Connection.connect({ address: `127.0.0.1:${proxy.port}` });
    try {
      const temporal = new Client({ connection, namespace: config.temporalNamespace });
      const services = { ...st.services, config, rails: new Rails(RAIL_ENTRIES, [...st.services.rails!.all(), ted]) };
      const stalled = supertest(createApp({ ...services, temporal }).callback());
      const started = Date.now();
      // The route triggers the TED poll's Schedule while it waits for the payment to be recorded.
      const res = await stalled
        .post(`/api/sandbox/operations/${deposit.id}/inbound-payment`)
        .set(c.auth)
        .set(idem())
        .send({ amount: { value: '61.00', asset: 'BRL' } })
        .timeout(30_000)
        .catch((err: Error) => err);
      expect(res, 'an answer, not a request the client gave up on').to.not.be.instanceOf(Error);
      const answer = res as supertest.Response;
      expect([answer.status, answer.body.code], JSON.stringify(answer.body)).to.deep.equal([
        503,
        'SERVICE_UNAVAILABLE',
      ]);
      expect(Date.now() - started, 'within the wait for a TED to be recorded (15 s)').to.be.lessThan(16_000);
    } finally {
      await connection.close().catch(() => undefined);
      await proxy.close();
    }
  });

  it('credits nothing the bank lists as processing or scheduled; the deposit once the bank effects it', async () => {
    // The Accounts API's completedAuthorisedPaymentType: a TED still TRANSACAO_PROCESSANDO may never be effected, and
    // a LANCAMENTO_FUTURO is one scheduled, not made. Neither is money yet (decision 0301).
    const { c, accountId, cnpj } = await owner();
    const first = (await tedDeposit(c, accountId, '31.00')).body;
    const second = (await tedDeposit(c, accountId, '32.00')).body;
    const processing = await sendTed(cnpj, '31.00', { completedAuthorisedPaymentType: 'TRANSACAO_PROCESSANDO' });
    const scheduled = await sendTed(cnpj, '32.00', { completedAuthorisedPaymentType: 'LANCAMENTO_FUTURO' });
    const settle = { orm: st.services.orm, temporal: st.services.temporal, config };
    const em = systemEm(st.services.orm);
    const before = await reconciledSpan(em, RAIL);
    const run = await reconcileRail(settle, ted);
    expect(await payment(processing)).to.equal(null);
    expect(await payment(scheduled)).to.equal(null);
    // Not dropped either: the run keeps its window, so the next one lists them again.
    expect(run.failed).to.include.members([processing, scheduled]);
    expect(await reconciledSpan(em, RAIL)).to.deep.equal(before);
    expect((await getOp(c, first.id)).currentState.status).to.equal('REQUESTED');
    expect((await balance(c, accountId, 'BRL')).available).to.equal('0.00');

    for (const id of [processing, scheduled]) {
      await bank(`/credits/${id}/listed-as`, { completedAuthorisedPaymentType: 'TRANSACAO_EFETIVADA' });
    }
    await poll();
    expect(await payment(processing)).to.deep.include({ status: 'MATCHED', operationId: first.id });
    expect(await payment(scheduled)).to.deep.include({ status: 'MATCHED', operationId: second.id });
    await untilStatus(c, first.id, 'COMPLETED');
    await untilStatus(c, second.id, 'COMPLETED');
    expect((await balance(c, accountId, 'BRL')).available).to.equal('63.00');
  });

  it('completes a deposit paid by a same-bank transfer, as a TED is; a Pix into the account is PIX’s', async () => {
    // A payer whose account is at the collection bank cannot send it a TED: the bank books an internal transfer, the
    // owner's money in the collection account all the same (decision 0302). A Pix into the account is the PIX rail's
    // (the PSP's account may be this one): counted here too it would be a second record of a PIX payment. A credit
    // that is no transfer (an investment's redemption) is not a payment.
    const { c, accountId, cnpj } = await owner();
    const internal = (await tedDeposit(c, accountId, '33.00')).body;
    const open = (await tedDeposit(c, accountId, '34.00')).body;
    const sameBank = await sendTed(cnpj, '33.00', { type: 'TRANSFERENCIA_MESMA_INSTITUICAO' });
    const byPix = await sendTed(cnpj, '34.00', { type: 'PIX' });
    const redemption = await sendTed(cnpj, '35.00', { type: 'RESGATE_APLIC_FINANCEIRA' });
    await poll();
    expect(await payment(sameBank)).to.deep.include({ status: 'MATCHED', operationId: internal.id });
    expect(await payment(byPix)).to.equal(null);
    expect(await payment(redemption)).to.equal(null);
    await untilStatus(c, internal.id, 'COMPLETED');
    expect((await getOp(c, open.id)).currentState.status).to.equal('REQUESTED');
    expect((await balance(c, accountId, 'BRL')).available).to.equal('33.00');
  });

  it('one odd entry stops no poll: a payer written as a number is read, a null entry is that run’s', async () => {
    const { c, accountId, cnpj } = await owner();
    const deposit = (await tedDeposit(c, accountId, '36.00')).body;
    const settle = { orm: st.services.orm, temporal: st.services.temporal, config };
    // Its tax id as a JSON number (a CNPJ with a leading zero loses it: read as the padded digits).
    const numeric = await sendTed(cnpj, '36.00', { partieCnpjCpf: Number(cnpj) });
    const run = await reconcileRail(settle, ted);
    expect(run.failed).to.deep.equal([]);
    expect(await payment(numeric)).to.deep.include({ status: 'MATCHED', operationId: deposit.id });
    await untilStatus(c, deposit.id, 'COMPLETED');

    // An entry that is no object, and one whose payer is neither text nor a number, among a readable one: that one is
    // recorded, the two are the run's failures and it keeps its window.
    const entry = (over: Record<string, unknown>) => listedTed('37.00', over);
    const oddPayer = entry({ partieCnpjCpf: { digits: cnpj } });
    const good = entry({});
    const em = systemEm(st.services.orm);
    const before = await reconciledSpan(em, RAIL);
    const odd = await reconcileRail(settle, listed([null, oddPayer, good]));
    expect(odd.failed).to.have.length(2);
    expect(odd.failed).to.include(oddPayer.transactionId);
    expect(await payment(oddPayer.transactionId)).to.equal(null);
    expect(await payment(good.transactionId)).to.deep.include({ status: 'UNMATCHED', customerId: null });
    expect(await reconciledSpan(em, RAIL)).to.deep.equal(before);
  });

  it("names in the poll's result a TED an operator recorded for another amount than the bank lists", async () => {
    // The bank's API was down; the operator recorded the credit from the statement and typed 38.00 for 380.00. The
    // first record stands, but the 342.00 at the bank is in no record: the run says so (decision 0303).
    const { c, cnpj } = await owner();
    const id = `TED${randomUUID().replace(/-/g, '').toUpperCase()}`;
    await cambio(
      ...['payment', 'record', '--rail', RAIL, '--customer', c.customerId, '--amount', '38.00'],
      ...['--asset', 'BRL', '--reference', id],
    );
    const res = await fetch(`${st.psp.url}/sim/bank-accounts/credits`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ transactionId: id, payerTaxId: cnpj, amount: '380.00', accountId: config.ted.accountId }),
    });
    expect(res.status).to.equal(201);
    const settle = { orm: st.services.orm, temporal: st.services.temporal, config };
    const told: string[] = [];
    const run = await reconcileRail(settle, ted, { onDisagreement: (_, what) => told.push(what) });
    // (Other tests' records said otherwise than the bank may be in the same window: each run says them all again.)
    expect(run.disagreeing).to.include(id);
    expect(told).to.include(`${id} is recorded as 38 BRL; ${RAIL} shows 380 BRL`);
    expect(run.failed).to.deep.equal([]);
    expect((await payment(id))!.amount).to.deep.include({ value: '38.00' });
    // Every run says it again (no run changes it); the credits recorded as the bank lists them are not named.
    const again = await reconcileRail(settle, ted);
    expect(again.disagreeing).to.include(id);
    expect(again.disagreeing).to.have.length(run.disagreeing.length);
  });

  it('closes the books: cambio books check', async () => {
    const ran = await cambio('books', 'check', '--asset', 'BRL', '--json');
    expect(JSON.parse(ran.stdout).ok, ran.stdout).to.equal(true);
  });
});
