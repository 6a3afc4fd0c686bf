// A deposit's window at its edges, on a real Temporal with worker processes killed and started: a payment recorded
// and signalled within the window, whose signal the workflow takes in the same task as the window's timer, completes
// the deposit (decision 0338); a workflow started after its window's end (its start waited out an outage) expires at
// once, not a whole window later (decision 0339). BOLETO, which has no late-arrival wait after its window (decision
// 0191), so the window's end alone decides.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { systemEm, tenantEm } from '../../db/orm';
import { presentOperation } from '../../presenters/operation';
import { openDeposit } from '../../services/operations/deposit';
import { recordInboundPayment } from '../../services/reported-payments';
import { sendPaymentDecision } from '../../payments/record-and-decide';
import { operationWorkflowId } from '../../workflows/ids';
import { activeAccount } from '../helpers/fixtures';
import { assertLedgerBalanced, balance, getOp, quote } from '../helpers/money';
import { kill, killAll, KILLED_WORKER_ENV, spawnWorker } from '../helpers/processes';
import { eventually, newCustomer, stack } from '../helpers/stack';

const WINDOW_SECONDS = 8;

describe("a deposit's window at its edges", function () {
  this.timeout(120000);
  // Each test's workers go with it: a worker holds up to 20 Postgres connections, and the other shards' tests run
  // beside this file on the same server.
  afterEach(killAll);

  it('completes the deposit with the payment recorded in time: MATCHED, credited once', async () => {
    const { services, config } = await stack();
    const taskQueue = `cambio-window-edge-${randomUUID()}`;
    const ctx = { ...services, config: { ...config, taskQueue, depositWindowSeconds: WINDOW_SECONDS } };
    const c = await newCustomer('Window Edge Ltda');
    const accountId = (await activeAccount(c, ['BRL'])).id;
    const em = tenantEm(services.orm, c.customerId);
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '30.00' });
    const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'BOLETO' as const } };
    const dep = presentOperation(await openDeposit(ctx, em, body, randomUUID()));
    const opened = Date.now();
    // Its workflow started (the worker's relay), waiting on the window's timer; then the worker dies.
    const first = await spawnWorker('window-worker-1', taskQueue, { env: KILLED_WORKER_ENV });
    const starts = () =>
      systemEm(services.orm).execute('select count(*)::int as n from workflow_starts where workflow_id = ?', [
        operationWorkflowId(dep.id),
      ]) as Promise<Array<{ n: number }>>;
    await eventually(starts, ([row]) => row.n === 0, 30000, 50);
    await kill(first);
    // Paid and signalled inside the window, with no worker to take the signal.
    const payment = await recordInboundPayment(
      em,
      dep.id,
      { amount: { value: '30.00', asset: 'BRL' }, endToEndId: `E${randomUUID().replace(/-/g, '').slice(0, 31)}` },
      { via: { taskQueue, actor: 'operator:window-edge-test' } },
    );
    expect(Date.now() - opened, 'recorded within the window').to.be.below(WINDOW_SECONDS * 1000);
    expect(await sendPaymentDecision(ctx, payment, Date.now() + 5000, 'operator:window-edge-test')).to.equal('SENT');
    // The window's timer fires while no worker runs: its task holds the signal and the timer together.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, opened + WINDOW_SECONDS * 1000 + 1500 - Date.now())),
    );
    await spawnWorker('window-worker-2', taskQueue);
    const op = await eventually(
      () => getOp(c, dep.id),
      (o) => o.currentState.status !== 'REQUESTED',
      60000,
      200,
    );
    expect(op.states.map((s: { status: string }) => s.status)).to.deep.equal(['REQUESTED', 'PROCESSING', 'COMPLETED']);
    const [{ status }] = (await systemEm(services.orm).execute('select status from inbound_payments where id = ?', [
      payment.id,
    ])) as Array<{ status: string }>;
    expect(status).to.equal('MATCHED');
    expect((await balance(c, accountId, 'BRL')).total).to.equal('30.00');
    await assertLedgerBalanced();
  });

  it("ends a deposit's window when its creation said, however late its workflow started", async () => {
    const { services, config } = await stack();
    const taskQueue = `cambio-window-late-${randomUUID()}`;
    const ctx = { ...services, config: { ...config, taskQueue, depositWindowSeconds: WINDOW_SECONDS } };
    const c = await newCustomer('Window Late Start Ltda');
    const accountId = (await activeAccount(c, ['BRL'])).id;
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '12.00' });
    const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'BOLETO' as const } };
    // Created while no worker serves its queue (as while Temporal is down): its start waits in the outbox.
    const dep = presentOperation(await openDeposit(ctx, tenantEm(services.orm, c.customerId), body, randomUUID()));
    const opened = Date.now();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_SECONDS * 1000 + 500));
    const started = Date.now();
    await spawnWorker('window-late-worker', taskQueue);
    const op = await eventually(
      () => getOp(c, dep.id),
      (o) => o.currentState.status !== 'REQUESTED',
      60000,
      100,
    );
    expect(started - opened, 'the worker came after the window').to.be.above(WINDOW_SECONDS * 1000);
    expect([op.currentState.status, op.currentState.reason?.code]).to.deep.equal(['FAILED', 'DEPOSIT_EXPIRED']);
    // Expired at once, not a whole window after its late start (when a payment of then would still complete it).
    expect(Date.now() - started, 'expired without a second window').to.be.below(WINDOW_SECONDS * 1000 - 2000);
  });

  it('still takes a payment recorded in the window when its workflow starts after the window', async () => {
    const { services, config } = await stack();
    const taskQueue = `cambio-window-late-paid-${randomUUID()}`;
    const ctx = { ...services, config: { ...config, taskQueue, depositWindowSeconds: WINDOW_SECONDS } };
    const c = await newCustomer('Window Late Paid Ltda');
    const accountId = (await activeAccount(c, ['BRL'])).id;
    const em = tenantEm(services.orm, c.customerId);
    const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '15.00' });
    const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'BOLETO' as const } };
    // Created and paid while nothing serves its queue (as while Temporal is down): the start and the payment's
    // decision wait in the outbox, for the relay.
    const dep = presentOperation(await openDeposit(ctx, em, body, randomUUID()));
    const opened = Date.now();
    const payment = await recordInboundPayment(
      em,
      dep.id,
      { amount: { value: '15.00', asset: 'BRL' }, endToEndId: `E${randomUUID().replace(/-/g, '').slice(0, 31)}` },
      { via: { taskQueue, actor: 'operator:window-edge-test' } },
    );
    expect(Date.now() - opened, 'recorded within the window').to.be.below(WINDOW_SECONDS * 1000);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, opened + WINDOW_SECONDS * 1000 + 500 - Date.now())));
    await spawnWorker('window-late-paid-worker', taskQueue);
    const op = await eventually(
      () => getOp(c, dep.id),
      (o) => o.currentState.status !== 'REQUESTED',
      60000,
      100,
    );
    expect(op.states.map((s: { status: string }) => s.status)).to.deep.equal(['REQUESTED', 'PROCESSING', 'COMPLETED']);
    const [{ status }] = (await systemEm(services.orm).execute('select status from inbound_payments where id = ?', [
      payment.id,
    ])) as Array<{ status: string }>;
    expect(status).to.equal('MATCHED');
    await assertLedgerBalanced();
  });
});
