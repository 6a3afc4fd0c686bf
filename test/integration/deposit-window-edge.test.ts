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

/** A task queue of the test's own, which nothing serves until the test spawns a worker for it. */
const ownQueue = () => `cambio-window-${randomUUID()}`;

/**
 * A BOLETO deposit of `value` BRL for a new customer, created through the service with a window of WINDOW_SECONDS on
 * `taskQueue`: while nothing serves it, its workflow's start waits in the outbox for a worker's relay.
 */
async function boletoDeposit(name: string, value: string, taskQueue = ownQueue()) {
  const { services, config } = await stack();
  const ctx = { ...services, config: { ...config, taskQueue, depositWindowSeconds: WINDOW_SECONDS } };
  const c = await newCustomer(name);
  const accountId = (await activeAccount(c, ['BRL'])).id;
  const em = tenantEm(services.orm, c.customerId);
  const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: value });
  const body = { accountId, quoteId: q.id, fundingInstruction: { rail: 'BOLETO' as const } };
  const dep = presentOperation(await openDeposit(ctx, em, body, randomUUID()));
  return { ctx, taskQueue, c, accountId, em, dep, opened: Date.now() };
}

/** A payment of the deposit recorded as an operator's, its decision queued with it for the relay (not sent). */
const recordPayment = (d: Awaited<ReturnType<typeof boletoDeposit>>, value: string) =>
  recordInboundPayment(
    d.em,
    d.dep.id,
    { amount: { value, asset: 'BRL' }, endToEndId: `E${randomUUID().replace(/-/g, '').slice(0, 31)}` },
    { via: { taskQueue: d.taskQueue, actor: 'operator:window-edge-test' } },
  );

/** Sleeps until `ms` after the deposit was opened. */
const untilAfterOpened = (d: { opened: number }, ms: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, d.opened + ms - Date.now())));

/** The deposit once it is no longer REQUESTED. */
const decided = (d: Awaited<ReturnType<typeof boletoDeposit>>, pollMs: number) =>
  eventually(
    () => getOp(d.c, d.dep.id),
    (o) => o.currentState.status !== 'REQUESTED',
    60000,
    pollMs,
  );

async function paymentStatus(paymentId: string): Promise<string> {
  const { services } = await stack();
  const sql = 'select status from inbound_payments where id = ?';
  const [{ status }] = (await systemEm(services.orm).execute(sql, [paymentId])) as Array<{ status: string }>;
  return status;
}

describe("a deposit's window at its edges", function () {
  this.timeout(120000);
  // Each test's workers go with it: a worker holds up to 20 Postgres connections, and the other shards' tests run
  // beside this file on the same server.
  afterEach(killAll);

  it('completes the deposit with the payment recorded in time: MATCHED, credited once', async () => {
    const { services } = await stack();
    // The worker polls before the deposit is opened: on a loaded machine its start-up alone can take the window.
    const taskQueue = ownQueue();
    const first = await spawnWorker('window-worker-1', taskQueue, { env: KILLED_WORKER_ENV });
    const d = await boletoDeposit('Window Edge Ltda', '30.00', taskQueue);
    // Its workflow started (the worker's relay), waiting on the window's timer; then the worker dies.
    const starts = () =>
      systemEm(services.orm).execute('select count(*)::int as n from workflow_starts where workflow_id = ?', [
        operationWorkflowId(d.dep.id),
      ]) as Promise<Array<{ n: number }>>;
    await eventually(starts, ([row]) => row.n === 0, 30000, 50);
    await kill(first);
    // Paid and signalled inside the window, with no worker to take the signal.
    const payment = await recordPayment(d, '30.00');
    expect(Date.now() - d.opened, 'recorded within the window').to.be.below(WINDOW_SECONDS * 1000);
    expect(await sendPaymentDecision(d.ctx, payment, Date.now() + 5000, 'operator:window-edge-test')).to.equal('SENT');
    // The window's timer fires while no worker runs: its task holds the signal and the timer together.
    await untilAfterOpened(d, WINDOW_SECONDS * 1000 + 1500);
    await spawnWorker('window-worker-2', d.taskQueue);
    const op = await decided(d, 200);
    expect(op.states.map((s: { status: string }) => s.status)).to.deep.equal(['REQUESTED', 'PROCESSING', 'COMPLETED']);
    expect(await paymentStatus(payment.id)).to.equal('MATCHED');
    expect((await balance(d.c, d.accountId, 'BRL')).total).to.equal('30.00');
    await assertLedgerBalanced();
  });

  it("ends a deposit's window when its creation said, however late its workflow started", async () => {
    // Created while no worker serves its queue (as while Temporal is down): its start waits in the outbox.
    const d = await boletoDeposit('Window Late Start Ltda', '12.00');
    await untilAfterOpened(d, WINDOW_SECONDS * 1000 + 500);
    const started = Date.now();
    await spawnWorker('window-late-worker', d.taskQueue);
    // Timed from the worker polling, not from its spawn: a loaded machine takes seconds to start a worker.
    const polling = Date.now();
    const op = await decided(d, 100);
    expect(started - d.opened, 'the worker came after the window').to.be.above(WINDOW_SECONDS * 1000);
    expect([op.currentState.status, op.currentState.reason?.code]).to.deep.equal(['FAILED', 'DEPOSIT_EXPIRED']);
    // Expired at once, not a whole window after its late start (when a payment of then would still complete it).
    expect(Date.now() - polling, 'expired without a second window').to.be.below(WINDOW_SECONDS * 1000 - 2000);
  });

  it('still takes a payment recorded in the window when its workflow starts after the window', async () => {
    // Created and paid while nothing serves its queue (as while Temporal is down): the start and the payment's
    // decision wait in the outbox, for the relay.
    const d = await boletoDeposit('Window Late Paid Ltda', '15.00');
    const payment = await recordPayment(d, '15.00');
    expect(Date.now() - d.opened, 'recorded within the window').to.be.below(WINDOW_SECONDS * 1000);
    await untilAfterOpened(d, WINDOW_SECONDS * 1000 + 500);
    await spawnWorker('window-late-paid-worker', d.taskQueue);
    const op = await decided(d, 100);
    expect(op.states.map((s: { status: string }) => s.status)).to.deep.equal(['REQUESTED', 'PROCESSING', 'COMPLETED']);
    expect(await paymentStatus(payment.id)).to.equal('MATCHED');
    await assertLedgerBalanced();
  });
});
