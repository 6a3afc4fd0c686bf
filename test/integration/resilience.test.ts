// Crash resilience against real Postgres and a real Temporal server: the outbox keeps a committed workflow start
// until a worker's relay has made it, activities retried after COMMIT post once, and a worker killed mid-flight
// loses nothing when another takes over its task queue.
import { randomUUID } from 'node:crypto';
import { presentOperation } from '../../presenters/operation';
import type { Operation } from '../../db/entities';
import fs from 'node:fs';
import { expect } from 'chai';
import Decimal from 'decimal.js';
import { Client, WorkflowNotFoundError } from '@temporalio/client';
import { systemEm, tenantEm } from '../../db/orm';
import { recordPayment } from '../../db/repositories/inbound-payments';
import { Dec } from '../../domain/money';
import { createOperationActivities } from '../../activities/operations';
import type { ServiceContext } from '../../services/context';
import { createSwap } from '../../services/operations/swap';
import { createTransfer } from '../../services/operations/transfer';
import { openDeposit } from '../../services/operations/deposit';
import { createWithdrawal } from '../../services/operations/withdrawal';
import { RELAY_LEASE_MS } from '../../worker/relay-limits';
import { relayWorkflowStarts } from '../../worker/workflow-start-relay';
import { operationWorkflowId } from '../../workflows/ids';
import { activeAccount } from '../helpers/fixtures';
import { approvedInstruction, referenceBeneficiary } from '../helpers/beneficiary-fixtures';
import { assertLedgerBalanced, balance, fund, getOp, quote, untilStatus } from '../helpers/money';
import { kill, killAll, spawnWorker } from '../helpers/processes';
import { eventually, newCustomer, stack, TestCustomer, withoutRelay } from '../helpers/stack';

/**
 * A relay that cannot reach Temporal (or dies before its starts): a copy of the real client that rejects every
 * workflow start (everything else, signals and describes included, reaches the real server).
 */
function brokenTemporal(real: Client): { temporal: Client; startCalls: () => number } {
  let calls = 0;
  const workflow = new Proxy(real.workflow, {
    get(target, prop) {
      if (prop === 'start') {
        return async () => {
          calls++;
          throw new Error('simulated: the relay lost Temporal before starting the workflow');
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const temporal = new Proxy(real, {
    get(target, prop) {
      if (prop === 'workflow') return workflow;
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as Client;
  return { temporal, startCalls: () => calls };
}

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  const { services } = await stack();
  return (await systemEm(services.orm).execute(query, params)) as T[];
}

const countRows = async (query: string, params: unknown[]) => Number((await sql<{ n: string }>(query, params))[0].n);
const postingsWithKey = (key: string) =>
  countRows('select count(*) as n from ledger_transactions where key = ?', [key]);
const eventsWithKey = (key: string) => countRows('select count(*) as n from events where dedupe_key = ?', [key]);
const outboxRows = (operationId: string) =>
  countRows('select count(*) as n from workflow_starts where workflow_id = ?', [operationWorkflowId(operationId)]);
const dropOutboxRow = (operationId: string) =>
  sql('delete from workflow_starts where workflow_id = ?', [operationWorkflowId(operationId)]);

/** A customer with one ACTIVE BRL/USD account funded with `brl` BRL through a real deposit. */
async function fundedCustomer(brl: string) {
  const c = await newCustomer('Resilience Ltda');
  const account = await activeAccount(c, ['BRL', 'USD']);
  await fund(c, account.id, 'BRL', brl);
  return { c, account };
}

async function expectWorkflowAbsent(temporal: Client, operationId: string) {
  const err = await temporal.workflow
    .getHandle(operationWorkflowId(operationId))
    .describe()
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err, 'no workflow was started for the operation').to.be.instanceOf(WorkflowNotFoundError);
}

describe('resilience', () => {
  describe('outbox: a committed workflow start waits for a relay that can make it', () => {
    it(
      'answers REQUESTED while no worker runs; the relay that comes back ' + 'runs the operation exactly once',
      async () => {
        const { services, config } = await stack();
        const { c, account } = await fundedCustomer('1000.00');
        const q = await quote(c, {
          accountId: account.id,
          sourceAsset: 'BRL',
          targetAsset: 'USD',
          sourceAmount: '100.00',
        });

        await withoutRelay(async () => {
          const created = presentOperation(
            await createSwap(services, tenantEm(services.orm, c.customerId), { accountId: account.id, quoteId: q.id }),
          );
          expect(created.currentState.status).to.equal('REQUESTED');
          expect(created.sourceAmount).to.deep.include({ value: '100.00', asset: 'BRL' });

          // Nobody started it: the operation sits with its funds held and no workflow exists. Waiting is the point:
          // a start that must not come has nothing to observe.
          await new Promise((r) => setTimeout(r, 1500));
          expect(await outboxRows(created.id), 'the outbox row waits').to.equal(1);
          expect((await getOp(c, created.id)).currentState.status).to.equal('REQUESTED');
          await expectWorkflowAbsent(services.temporal, created.id);
          expect(await balance(c, account.id, 'BRL')).to.deep.include({ available: '900.00', held: '100.00' });
          expect(await postingsWithKey(`${created.id}:settle`)).to.equal(0);
          const [row] = await sql<{
            workflow_id: string;
            workflow_type: string;
            task_queue: string;
            args: unknown;
            search_attributes: unknown;
          }>(
            'select workflow_id, workflow_type, task_queue, args, search_attributes from workflow_starts ' +
              'where workflow_id = ?',
            [operationWorkflowId(created.id)],
          );
          expect(row.task_queue, 'the row names the queue whose workers run it').to.equal(config.taskQueue);

          // A relay pass whose starts fail (Temporal unreachable, or the relay dying mid-pass) leaves the row.
          const broken = brokenTemporal(services.temporal);
          const failed = await relayWorkflowStarts(services.orm, broken.temporal, config.taskQueue).catch(
            (e: unknown) => e,
          );
          expect(failed).to.be.instanceOf(AggregateError);
          expect(broken.startCalls()).to.be.at.least(1);
          expect(await outboxRows(created.id), 'the outbox row survives the failed start').to.equal(1);
          await expectWorkflowAbsent(services.temporal, created.id);

          // A pass that reaches Temporal, once the row's backoff is over, starts it and forgets the row.
          await eventually(
            () => relayWorkflowStarts(services.orm, services.temporal, config.taskQueue),
            (n) => n >= 1,
            10000,
            100,
          );
          const done = await untilStatus(c, created.id, 'COMPLETED');
          expect(done.states.map((s: { status: string }) => s.status)).to.deep.equal([
            'REQUESTED',
            'PROCESSING',
            'COMPLETED',
          ]);
          expect(await outboxRows(created.id), 'the relay forgets the row once started').to.equal(0);
          expect(await balance(c, account.id, 'BRL')).to.deep.include({ available: '900.00', held: '0.00' });
          expect((await balance(c, account.id, 'USD')).available).to.equal(q.targetAmount.value);
          expect(await postingsWithKey(`${created.id}:settle`)).to.equal(1);
          const handle = services.temporal.workflow.getHandle(operationWorkflowId(created.id));
          const firstRun = (await handle.describe()).runId;

          // A relay that crashed after starting but before deleting its row sees the row again: the closed
          // workflow is not started a second time (REJECT_DUPLICATE), and the row is cleared.
          await sql(
            'insert into workflow_starts (workflow_id, workflow_type, task_queue, args, search_attributes, ' +
              'created_at) values (?, ?, ?, ?::jsonb, ?::jsonb, now())',
            [
              row.workflow_id,
              row.workflow_type,
              row.task_queue,
              JSON.stringify(row.args),
              JSON.stringify(row.search_attributes),
            ],
          );
          await relayWorkflowStarts(services.orm, services.temporal, config.taskQueue);
          expect(await outboxRows(created.id)).to.equal(0);
          const after = await handle.describe();
          expect(after.runId, 'still the first and only run').to.equal(firstRun);
          expect(after.status.name).to.equal('COMPLETED');
          // Give a (wrong) second run time to act before checking nothing moved again.
          await new Promise((r) => setTimeout(r, 1000));
          expect(await postingsWithKey(`${created.id}:settle`)).to.equal(1);
          expect((await getOp(c, created.id)).states).to.have.length(3);
          expect(await balance(c, account.id, 'BRL')).to.deep.include({ available: '900.00', held: '0.00' });
          expect((await balance(c, account.id, 'USD')).available).to.equal(q.targetAmount.value);
        });
        await assertLedgerBalanced();
      },
    );
  });

  describe('activities retried after their COMMIT post once', () => {
    // Operations left in REQUESTED with no workflow and no outbox row: only these direct calls touch them. They
    // are created for a task queue no worker serves, so no relay starts them before their row is dropped.
    async function orphan(create: (ctx: ServiceContext) => Promise<Operation>): Promise<Operation> {
      const { services } = await stack();
      const op = await create({
        ...services,
        config: { ...services.config, taskQueue: `cambio-orphans-${randomUUID()}` },
      });
      await dropOutboxRow(op.id);
      expect(presentOperation(op)).to.have.nested.property('currentState.status', 'REQUESTED');
      return op;
    }

    async function activities() {
      const { services, config } = await stack();
      return createOperationActivities({
        config,
        orm: services.orm,
        rates: services.rates,
        temporal: services.temporal,
      });
    }

    const eventTypes = async (operationId: string) =>
      (await sql<{ type: string }>('select type from events where resource_id = ? order by type', [operationId])).map(
        (e) => e.type,
      );

    let c: TestCustomer;
    let accountId: string;
    before(async () => {
      ({
        c,
        account: { id: accountId },
      } = await fundedCustomer('1000.00'));
    });

    it('completeOperation twice: one settle posting, one COMPLETED event, balances moved once', async () => {
      const { services } = await stack();
      const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '100.00' });
      const usdBefore = new Decimal((await balance(c, accountId, 'USD')).available);
      const brlBefore = await balance(c, accountId, 'BRL');
      const op = await orphan((ctx) =>
        createSwap(ctx, tenantEm(services.orm, c.customerId), { accountId, quoteId: q.id }),
      );
      const acts = await activities();

      expect(await acts.completeOperation({ operationId: op.id })).to.equal('COMPLETED');
      expect(await acts.completeOperation({ operationId: op.id })).to.equal('COMPLETED');

      expect(await postingsWithKey(`${op.id}:settle`)).to.equal(1);
      expect(await eventsWithKey(`${op.id}:COMPLETED`)).to.equal(1);
      expect(await eventTypes(op.id)).to.deep.equal(['OPERATION_COMPLETED', 'OPERATION_REQUESTED']);
      const view = await getOp(c, op.id);
      expect(view.states.map((s: { status: string }) => s.status)).to.deep.equal([
        'REQUESTED',
        'PROCESSING',
        'COMPLETED',
      ]);
      const brl = await balance(c, accountId, 'BRL');
      expect(brl.available).to.equal(new Decimal(brlBefore.available).minus('100.00').toFixed(2));
      expect(brl.held).to.equal(brlBefore.held);
      expect((await balance(c, accountId, 'USD')).available).to.equal(usdBefore.plus(q.targetAmount.value).toFixed(2));
      await expectWorkflowAbsent(services.temporal, op.id);
    });

    it('completeOperation by two overlapping attempts: the row lock lets one settle', async () => {
      const { services } = await stack();
      const brlBefore = await balance(c, accountId, 'BRL');
      const target = await activeAccount(c, ['BRL']);
      const op = await orphan((ctx) =>
        createTransfer(ctx, tenantEm(services.orm, c.customerId), {
          sourceAccountId: accountId,
          targetAccountId: target.id,
          amount: { value: '25.00', asset: 'BRL' },
        }),
      );
      const acts = await activities();

      const outcomes = await Promise.all([
        acts.completeOperation({ operationId: op.id }),
        acts.completeOperation({ operationId: op.id }),
      ]);
      expect(outcomes).to.deep.equal(['COMPLETED', 'COMPLETED']);
      expect(await postingsWithKey(`${op.id}:settle`)).to.equal(1);
      expect(await eventsWithKey(`${op.id}:COMPLETED`)).to.equal(1);
      expect((await balance(c, accountId, 'BRL')).available).to.equal(
        new Decimal(brlBefore.available).minus('25.00').toFixed(2),
      );
      expect((await balance(c, target.id, 'BRL')).available).to.equal('25.00');
    });

    it('failOperation twice: one release posting, one FAILED event, the hold given back once', async () => {
      const { services } = await stack();
      const brlBefore = await balance(c, accountId, 'BRL');
      const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '40.00' });
      const op = await orphan((ctx) =>
        createSwap(ctx, tenantEm(services.orm, c.customerId), { accountId, quoteId: q.id }),
      );
      expect(await balance(c, accountId, 'BRL')).to.deep.include({
        available: new Decimal(brlBefore.available).minus('40.00').toFixed(2),
        held: new Decimal(brlBefore.held).plus('40.00').toFixed(2),
      });
      const acts = await activities();
      const reason = { code: 'SETTLEMENT_FAILED', message: 'simulated', details: {} };

      expect(await acts.failOperation({ operationId: op.id, reason })).to.equal('FAILED');
      expect(await acts.failOperation({ operationId: op.id, reason })).to.equal('FAILED');

      expect(await postingsWithKey(`${op.id}:release`)).to.equal(1);
      expect(await postingsWithKey(`${op.id}:settle`)).to.equal(0);
      expect(await eventsWithKey(`${op.id}:FAILED`)).to.equal(1);
      const view = await getOp(c, op.id);
      expect(view.states.map((s: { status: string }) => s.status)).to.deep.equal(['REQUESTED', 'FAILED']);
      expect(view.currentState.reason.code).to.equal('SETTLEMENT_FAILED');
      expect(await balance(c, accountId, 'BRL')).to.deep.include({
        available: brlBefore.available,
        held: brlBefore.held,
      });
      // A completion retried after the failure changes nothing either.
      expect(await acts.completeOperation({ operationId: op.id })).to.equal('FAILED');
      expect(await postingsWithKey(`${op.id}:settle`)).to.equal(0);
    });

    it('executePayout twice pays out once; completing it twice debits once', async () => {
      const { services } = await stack();
      const { beneficiaryId, instructionId } = await approvedInstruction(c, {
        dictKeyType: 'EMAIL',
        dictKey: `resilience-${randomUUID().slice(0, 8)}@example.com`,
      });
      const brlBefore = await balance(c, accountId, 'BRL');
      const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '30.00' });
      const op = await orphan((ctx) =>
        createWithdrawal(ctx, tenantEm(services.orm, c.customerId), {
          accountId,
          quoteId: q.id,
          beneficiary: referenceBeneficiary(beneficiaryId, instructionId),
        }),
      );
      const acts = await activities();

      const first = await acts.executePayout({ operationId: op.id });
      const second = await acts.executePayout({ operationId: op.id });
      expect(first.ok).to.equal(true);
      expect(second, 'the retry reads the stored payout').to.deep.equal(first);
      const debits = (await getOp(c, op.id)).transactions.filter((t: { direction: string }) => t.direction === 'DEBIT');
      expect(debits).to.have.length(1);
      expect(debits[0]).to.deep.include({ status: 'COMPLETED', amount: { value: '30.00', asset: 'BRL', decimals: 2 } });

      expect(await acts.completeOperation({ operationId: op.id })).to.equal('COMPLETED');
      expect(await acts.completeOperation({ operationId: op.id })).to.equal('COMPLETED');
      expect(await postingsWithKey(`${op.id}:settle`)).to.equal(1);
      expect(await eventsWithKey(`${op.id}:COMPLETED`)).to.equal(1);
      expect(await balance(c, accountId, 'BRL')).to.deep.include({
        available: new Decimal(brlBefore.available).minus('30.00').toFixed(2),
        held: brlBefore.held,
      });
    });

    it('reconcileDeposit twice, failing then matching: one FAILED event, one credit', async () => {
      const { services } = await stack();
      const brlBefore = await balance(c, accountId, 'BRL');
      const q = await quote(c, { accountId, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '70.00' });
      const op = await orphan((ctx) =>
        openDeposit(
          ctx,
          tenantEm(services.orm, c.customerId),
          { accountId, quoteId: q.id, fundingInstruction: { rail: 'PIX_KEY' } },
          randomUUID(),
        ),
      );
      const acts = await activities();
      // The payment rows recordInboundPayment writes, RECEIVED, with their arrival in the suspense (no workflow to
      // decide them here).
      const pay = async (value: string) => {
        const payment = {
          operationId: op.id,
          customerId: c.customerId,
          accountId,
          amount: new Dec(value),
          asset: 'BRL',
          rail: 'PIX_KEY',
          endToEndId: `E${randomUUID().replace(/-/g, '').slice(0, 31)}`,
        };
        await systemEm(services.orm).transactional((em) => recordPayment(em, payment));
      };

      await pay('50.00');
      expect(await acts.reconcileDeposit({ operationId: op.id })).to.equal('FAILED');
      expect(await acts.reconcileDeposit({ operationId: op.id })).to.equal('FAILED');
      expect(await eventsWithKey(`${op.id}:FAILED`)).to.equal(1);
      let view = await getOp(c, op.id);
      expect(view.states.map((s: { status: string }) => s.status)).to.deep.equal(['REQUESTED', 'FAILED']);
      expect(view.currentState.reason.code).to.equal('AMOUNT_MISMATCH');
      expect(await balance(c, accountId, 'BRL')).to.deep.include({
        available: brlBefore.available,
        held: brlBefore.held,
      });

      await pay('20.00');
      expect(await acts.reconcileDeposit({ operationId: op.id })).to.equal('COMPLETED');
      expect(await acts.reconcileDeposit({ operationId: op.id })).to.equal('COMPLETED');
      expect(await postingsWithKey(`${op.id}:settle`)).to.equal(1);
      expect(await eventsWithKey(`${op.id}:COMPLETED`)).to.equal(1);
      view = await getOp(c, op.id);
      expect(view.states.map((s: { status: string }) => s.status)).to.deep.equal([
        'REQUESTED',
        'FAILED',
        'PROCESSING',
        'COMPLETED',
      ]);
      expect(await balance(c, accountId, 'BRL')).to.deep.include({
        available: new Decimal(brlBefore.available).plus('70.00').toFixed(2),
        held: brlBefore.held,
      });
      await assertLedgerBalanced();
    });
  });

  describe('a worker killed mid-flight', () => {
    /** Live (non-zombie) processes of a process group, read from /proc; undefined where there is no /proc. */
    function liveInGroup(pgid: number): number | undefined {
      if (!fs.existsSync('/proc/self/stat')) return undefined;
      let n = 0;
      for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        try {
          const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
          const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') n++;
        } catch {
          // exited while we looked
        }
      }
      return n;
    }

    after(killAll);

    it('leaves nothing behind: a second worker completes every operation, each settled once', async function () {
      this.timeout(180000);
      const { services, config } = await stack();
      const taskQueue = `cambio-crash-${randomUUID()}`;
      const ctx: ServiceContext = { ...services, config: { ...config, taskQueue } };
      const c = await newCustomer('Crash Test SA');
      const source = await activeAccount(c, ['BRL', 'USD']);
      const target = await activeAccount(c, ['BRL']);
      await fund(c, source.id, 'BRL', '10000.00');

      // Ready once it polls its task queue (bundling the workflows takes a while).
      const first = await spawnWorker('worker-1', taskQueue);

      const quotes = await Promise.all(
        Array.from({ length: 10 }, () =>
          quote(c, { accountId: source.id, sourceAsset: 'BRL', targetAsset: 'USD', sourceAmount: '100.00' }),
        ),
      );
      // All 20 creates at once (they queue on the balance row). The worker is killed the moment it has
      // demonstrably started on them: a fixed delay after sequential creates found all 20 already COMPLETED,
      // which would prove nothing about a crash.
      const em = () => tenantEm(services.orm, c.customerId);
      const creating = Promise.all(
        quotes.flatMap((q) => [
          createSwap(ctx, em(), { accountId: source.id, quoteId: q.id }),
          createTransfer(ctx, em(), {
            sourceAccountId: source.id,
            targetAccountId: target.id,
            amount: { value: '50.00', asset: 'BRL' },
          }),
        ]),
      );
      creating.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
      const ofSource = `from operations where account_id = ? and type in ('SWAP', 'TRANSFER')`;
      await eventually(
        () => countRows(`select count(*) as n ${ofSource} and status <> 'REQUESTED'`, [source.id]),
        (n) => n > 0,
        30000,
        5,
      );
      await kill(first);
      const atCrash = await sql<{ status: string; n: string }>(
        `select status, count(*) as n ${ofSource} group by status`,
        [source.id],
      );
      expect(first.child.signalCode, 'the first worker died of SIGKILL').to.equal('SIGKILL');
      if (liveInGroup(first.child.pid!) !== undefined) {
        // The whole process group must be gone, or the "crash" kept working.
        await eventually(
          async () => liveInGroup(first.child.pid!)!,
          (n) => n === 0,
          5000,
        );
      }
      const completedAtCrash = Number(atCrash.find((r) => r.status === 'COMPLETED')?.n ?? 0);
      expect(completedAtCrash, `the crash left work outstanding: ${JSON.stringify(atCrash)}`).to.be.below(20);
      const created = await creating;
      expect(created.every((o) => presentOperation(o).currentState.status === 'REQUESTED')).to.equal(true);
      const ids = created.map((o) => o.id);

      const second = await spawnWorker('worker-2', taskQueue, { pollers: 0 });
      const statuses = await eventually(
        async () => sql<{ id: string; status: string }>('select id, status from operations where id in (?)', [ids]),
        (rows) => rows.length === ids.length && rows.every((r) => r.status === 'COMPLETED'),
        150000,
        500,
      ).catch((err: Error) => {
        throw new Error(
          `${err.message}\nstatuses at crash: ${JSON.stringify(atCrash)}\nworker ` +
            `output:\n${[first, second].map((p) => p.output()).join('\n---\n')}`,
        );
      });
      expect(statuses).to.have.length(20);

      const settles = await sql<{ operation_id: string; n: string }>(
        `select operation_id, count(*) as n from ledger_transactions where operation_id in (?) and key ` +
          `like '%:settle' group by operation_id`,
        [ids],
      );
      expect(settles).to.have.length(20);
      expect(
        settles.every((s) => Number(s.n) === 1),
        'exactly one settle posting per operation',
      ).to.equal(true);
      expect(
        await countRows(
          `select count(*) as n from ledger_transactions where operation_id in (?) and key like '%:release'`,
          [ids],
        ),
      ).to.equal(0);
      // Every outbox row is cleared. Rows the killed worker's relay had claimed stay leased until the lease runs
      // out (RELAY_LEASE_MS), then the second worker's relay finds them started and deletes them.
      await eventually(
        () =>
          countRows('select count(*) as n from workflow_starts where workflow_id in (?)', [
            ids.map(operationWorkflowId),
          ]),
        (n) => n === 0,
        RELAY_LEASE_MS + 10_000,
        100,
      );

      const usdBought = quotes.reduce((sum, q) => sum.plus(q.targetAmount.value), new Decimal(0));
      // 10 000 − 10 × 100 swapped − 10 × 50 transferred.
      expect(await balance(c, source.id, 'BRL')).to.deep.include({ available: '8500.00', held: '0.00' });
      expect(await balance(c, source.id, 'USD')).to.deep.include({ available: usdBought.toFixed(2), held: '0.00' });
      expect(await balance(c, target.id, 'BRL')).to.deep.include({ available: '500.00', held: '0.00' });
      await assertLedgerBalanced();
    });
  });
});
