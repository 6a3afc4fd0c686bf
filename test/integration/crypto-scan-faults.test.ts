// The CRYPTO deposit scanner under faults (../shared/spec/decisions.md, "Crypto: stablecoins on a real chain
// (EVM)"): a worker killed while the scanner catches up over many blocks records nothing twice and misses nothing
// once it is back (the cursor moves in the transaction that records each range), and a node that goes away fails
// the scan's activity, which Temporal retries; transfers made meanwhile are recorded once the node is back. The
// scanner runs in a worker process of this file's own, whose node is a TCP proxy in front of anvil.
import { expect } from 'chai';
import { cryptoStack, type CryptoDeposit, type CryptoStack } from '../helpers/crypto-stack';
import { assertLedgerBalanced, balance, getOp } from '../helpers/money';
import { paymentsOf } from '../helpers/inbound-payments';
import { freePort, kill, killAll } from '../helpers/processes';
import { TcpProxy } from '../helpers/tcp-proxy';
import { eventually, newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { ActivityFailure, WorkflowFailedError } from '@temporalio/client';
import { RetryState } from '@temporalio/common';
import { scheduleId } from '../../worker/schedules';

const CONFIRMATIONS = 2;

describe('the CRYPTO scanner killed mid-range or cut from its node', function () {
  this.timeout(240_000);
  let cs: CryptoStack;
  let proxy: TcpProxy;

  before(async () => {
    cs = await cryptoStack({
      confirmations: CONFIRMATIONS,
      // Small ranges: catching up takes many of them, and the kill lands between two.
      env: { EVM_MAX_BLOCK_RANGE: '2' },
      async workerRpcUrl(chain) {
        const port = await freePort();
        proxy = new TcpProxy(port, { host: '127.0.0.1', port: Number(new URL(chain.url).port) });
        await proxy.open();
        return `http://127.0.0.1:${port}`;
      },
    });
    // The first scan puts the chain's cursor at the head: what follows is history it has to catch up on.
    await cs.triggerScan();
    await eventually(cs.scanCursor, (next) => next !== undefined, 30_000, 200);
  });
  after(async () => {
    await killAll();
    await proxy?.cut().catch(() => undefined);
    await cs?.stop();
  });

  /** Pays each deposit its amount, `gap` empty blocks after each transfer; a transfer to no deposit between them. */
  async function payAll(deposits: CryptoDeposit[], value: string, gap: number) {
    const hashes: string[] = [];
    for (const [i, d] of deposits.entries()) {
      hashes.push(await cs.chain.transfer({ token: 'USDC', to: d.walletAddress, amount: value, from: i % 3 }));
      // Another Transfer log in the range, to an address that is no deposit's: read, never recorded.
      await cs.chain.transfer({ token: 'USDC', to: cs.chain.payers[3], amount: '0.5', from: i % 3 });
      await cs.chain.mine(gap);
    }
    return hashes;
  }

  /** Every deposit COMPLETED with exactly one payment, its transfer's, and its amount credited once. */
  async function paidOnce(c: TestCustomer, deposits: CryptoDeposit[], hashes: string[], value: string) {
    for (const [i, d] of deposits.entries()) {
      const payments = await paymentsOf(c, `operationId[eq]=${d.id}`);
      expect(payments.map((p) => [p.status, p.endToEndId.split(':')[1]])).to.deep.equal([['MATCHED', hashes[i]]]);
      expect((await getOp(c, d.id)).currentState.status).to.equal('COMPLETED');
      expect((await balance(c, d.accountId, 'USDC')).total).to.equal(value);
    }
    // Nothing else was recorded for the customer: no transfer twice, none to another address.
    expect(await paymentsOf(c, 'status[ne]=MATCHED')).to.deep.equal([]);
    await assertLedgerBalanced();
  }

  /** Triggers scans (mining a block each time) until every deposit is COMPLETED. */
  async function untilCompleted(c: TestCustomer, deposits: CryptoDeposit[], timeoutMs: number) {
    await eventually(
      async () => {
        await cs.triggerScan();
        await cs.chain.mine(1);
        const states = await Promise.all(deposits.map(async (d) => (await getOp(c, d.id)).currentState.status));
        return states.filter((s) => s !== 'COMPLETED').length;
      },
      (left) => left === 0,
      timeoutMs,
      1000,
    );
  }

  it('a worker killed while the scanner catches up: after a restart each transfer is recorded once', async () => {
    const c = await newCustomer('Scanner Kill Ltda');
    // One account: each deposit of it opens on its own address.
    const deposits: CryptoDeposit[] = [];
    for (let i = 0; i < 10; i++) deposits.push(await cs.openDeposit(c, '1.25'));
    const from = (await cs.scanCursor())!;
    const hashes = await payAll(deposits, '1.25', 30);
    await cs.chain.mine(CONFIRMATIONS);
    const head = await cs.chain.blockNumber();
    expect(Number(head - from), 'blocks to catch up on').to.be.greaterThan(300);

    await cs.triggerScan();
    // Part of the history read and recorded, part not: the worker dies there.
    const reached = await eventually(cs.scanCursor, (next) => next! > from + 40n, 60_000, 20);
    await kill(cs.worker);
    const atKill = (await cs.scanCursor())!;
    expect(atKill < head, `killed mid-range (cursor ${atKill}, head ${head})`).to.equal(true);
    expect(reached! > from).to.equal(true);

    cs.worker = await cs.startWorker('crypto-worker-restarted');
    // The killed run's scan is retried once its heartbeat is missed, or a later run goes on from the cursor.
    await untilCompleted(c, deposits, 120_000);
    await paidOnce(c, deposits, hashes, '1.250000');
  });

  it('the node goes away: the scan is retried, and transfers made meanwhile are recorded once it is back', async () => {
    const c = await newCustomer('Scanner Node Down Ltda');
    const deposits: CryptoDeposit[] = [];
    for (let i = 0; i < 4; i++) deposits.push(await cs.openDeposit(c, '2.50'));
    await proxy.cut();
    let hashes: string[];
    try {
      hashes = await payAll(deposits, '2.5', 5);
      await cs.chain.mine(CONFIRMATIONS);
      // A run now fails its activity on the node; Temporal tries it again, up to the workflow's attempts.
      const failure = await failedScanRun();
      expect(failure).to.be.instanceOf(ActivityFailure);
      expect((failure as ActivityFailure).retryState).to.equal(RetryState.MAXIMUM_ATTEMPTS_REACHED);
      expect((failure.cause as Error | undefined)?.message).to.match(/the EVM node failed a call/);
      for (const d of deposits) expect(await paymentsOf(c, `operationId[eq]=${d.id}`)).to.deep.equal([]);
    } finally {
      await proxy.open();
    }
    expect(hashes).to.have.length(deposits.length);
    await untilCompleted(c, deposits, 60_000);
    await paidOnce(c, deposits, hashes, '2.500000');
  });

  /** Triggers a scan run and waits for it to end; the cause of its failure (the run must fail). */
  async function failedScanRun() {
    const { services } = await stack();
    const schedule = services.temporal.schedule.getHandle(scheduleId(cs, 'crypto-reconciliation'));
    const since = Date.now() - 1000;
    await cs.triggerScan();
    const action = await eventually(
      async () => (await schedule.describe()).info.recentActions.find((a) => a.takenAt.getTime() >= since),
      (a) => a !== undefined,
      30_000,
      200,
    );
    const run = services.temporal.workflow.getHandle(action!.action.workflow.workflowId);
    const err = await run.result().then(
      () => expect.fail('the scan run completed with its node down'),
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(WorkflowFailedError);
    return (err as WorkflowFailedError).cause!;
  }
});
