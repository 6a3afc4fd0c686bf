// Payouts and returns that wait on the PSP, on a time-skipping Temporal test server (decisions 0108, 0109): a payout
// pending for hours of reads continues as new instead of growing one history to Temporal's limit, stays listed as
// stuck, and completes once on REALIZADO (a return likewise, RETURNED once on DEVOLVIDO); a worker with no PSP fails
// the withdrawal RAIL_NOT_CONFIGURED and releases its hold.
// Postgres and the simulated PSP are the stack's; only Temporal's clock is virtual.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import Decimal from 'decimal.js';
import supertest from 'supertest';
import { temporal as proto } from '@temporalio/proto';
import { createApp } from '../../api/app';
import type { ServiceContext } from '../../services/context';
import { systemEm } from '../../db/orm';
import { payoutIdFor } from '../../rails/pix/ids';
import { operationWorkflowId, paymentReturnWorkflowId } from '../../workflows/ids';
import { returnPayment } from '../../services/inbound-payment-resolution';
import { findPaymentByReference } from '../../db/repositories/inbound-payments';
import { withdrawToNewKey } from '../helpers/beneficiary-fixtures';
import { cambio } from '../helpers/cli';
import { activeAccount } from '../helpers/fixtures';
import { balance, fund, getOp } from '../helpers/money';
import { eventually, newCustomer, stack, type TestCustomer } from '../helpers/stack';
import { startTimeSkipping, type TimeSkipping } from '../helpers/time-skipping';
import { replayOnCurrentCode } from '../helpers/workflow-bundle';

const EventType = proto.api.enums.v1.EventType;

describe('payouts waiting on the PSP (time skipping)', function () {
  this.timeout(600000);
  let skipping: TimeSkipping;
  let c: TestCustomer;
  let accountId: string;

  /** A context of its own on the test server: its queues, and the PSP `pspUrl` names (none when undefined). */
  async function context(pspUrl: string | undefined): Promise<ServiceContext> {
    const { services, config } = await stack();
    const queue = `cambio-payout-waits-${randomUUID()}`;
    return {
      ...services,
      temporal: skipping.env.client,
      config: {
        ...config,
        taskQueue: queue,
        webhookTaskQueue: `${queue}-webhooks`,
        railsTaskQueue: `${queue}-rails`,
        pix: { ...config.pix, pspUrl },
      },
    };
  }

  /** The API of `ctx`, but with the stack's PSP: a withdrawal is accepted, and its workflow starts on ctx's queue. */
  const api = async (ctx: ServiceContext) => {
    const { config } = await stack();
    return supertest(createApp({ ...ctx, config: { ...ctx.config, pix: config.pix } }).callback());
  };

  const payoutsAtPsp = async (idEnvio: string) => {
    const { psp } = await stack();
    const state = (await psp.control('GET', '/state')).body;
    return Object.values(state.payouts as Record<string, { idEnvio: string; status: string }>).filter(
      (p) => p.idEnvio === idEnvio,
    );
  };
  const stuckIds = async () =>
    (
      JSON.parse((await cambio('operation', 'list', '--stuck', '--older-than', '0', '--json')).stdout) as {
        id: string;
      }[]
    ).map((op) => op.id);
  const count = async (query: string, params: unknown[]) => {
    const { services } = await stack();
    return Number(((await systemEm(services.orm).execute(query, params)) as Array<{ n: string }>)[0].n);
  };

  /** Every run of the workflow, last to first, with how many reads (`readType`) each scheduled and how it ended. */
  async function runs(workflowId: string, readType = 'railFollowPayout') {
    const out: { runId: string; reads: number; events: number; end: string; history: proto.api.history.v1.IHistory }[] =
      [];
    let runId: string | undefined = (await skipping.env.client.workflow.getHandle(workflowId).describe()).runId;
    while (runId) {
      const history: proto.api.history.v1.IHistory = await skipping.env.client.workflow
        .getHandle(workflowId, runId)
        .fetchHistory();
      const events: proto.api.history.v1.IHistoryEvent[] = history.events ?? [];
      const reads = events.filter(
        (e) =>
          e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
          e.activityTaskScheduledEventAttributes?.activityType?.name === readType,
      ).length;
      const last = events[events.length - 1];
      out.push({ runId, reads, events: events.length, end: EventType[last?.eventType ?? 0] ?? '', history });
      runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    }
    return out;
  }

  before(async function () {
    this.timeout(120000);
    skipping = await startTimeSkipping(this, 'payout waits');
    c = await newCustomer('Payout Waits Ltda');
    accountId = (await activeAccount(c, ['BRL'] as never)).id;
    await fund(c, accountId, 'BRL', '500.00');
  });

  after(async () => {
    await skipping?.env.teardown();
  });

  it('a payout pending for hours of reads continues as new, stays stuck, completes once on REALIZADO', async () => {
    const { psp } = await stack();
    const ctx = await context((await stack()).config.pix.pspUrl);
    const key = `pending-for-days-${randomUUID()}@example.com`;
    await psp.control('POST', '/payout-rules', { chave: key, status: 'EM_PROCESSAMENTO' });
    const before = await balance(c, accountId, 'BRL');
    await skipping.withWorker(ctx, async () => {
      const res = await withdrawToNewKey(c, accountId, key, '10.00', await api(ctx));
      expect(res.status).to.equal(201);
      const id: string = res.body.id;
      const idEnvio = payoutIdFor(id);
      await eventually(
        () => payoutsAtPsp(idEnvio),
        (p) => p.length === 1,
        30000,
      );
      // Eight hours of reads, a minute apart once they have backed off: about 480. A read is eleven events, so a run
      // continues as new after 372 (MAX_HISTORY_EVENTS, 4,096): the first run does, and the second waits. (Fifteen
      // hours and a third run took 80 s of the suite's time on a 2-core host; the return below also checks two.)
      await skipping.env.sleep('8 hours');

      const waiting = await getOp(c, id);
      expect(waiting.currentState.status).to.equal('PROCESSING');
      expect(waiting.transactions).to.have.length(0);
      expect(await balance(c, accountId, 'BRL')).to.deep.include({
        held: new Decimal(before.held).plus('10.00').toFixed(2),
        total: before.total,
      });
      expect(await stuckIds()).to.include(id);
      const continued = await runs(operationWorkflowId(id));
      const reads = continued.reduce((n, r) => n + r.reads, 0);
      expect(reads, 'payout reads in 8 hours').to.be.above(400);
      expect(continued.length, 'runs').to.be.at.least(2);
      // Every run but the current one ended by continuing as new, each well under Temporal's 51,200 events.
      expect(continued.slice(1).map((r) => r.end)).to.satisfy((ends: string[]) =>
        ends.every((e) => e === 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW'),
      );
      expect(Math.max(...continued.map((r) => r.events))).to.be.below(5000);
      // The withdrawal's search attributes follow it from run to run.
      const described = await skipping.env.client.workflow.getHandle(operationWorkflowId(id)).describe();
      expect(described.searchAttributes).to.deep.include({
        OperationStatus: ['PROCESSING'],
        OperationType: ['WITHDRAWAL'],
      });

      expect((await psp.control('POST', `/payouts/${idEnvio}/settle`, { status: 'REALIZADO' })).status).to.equal(204);
      expect(await skipping.env.client.workflow.getHandle(operationWorkflowId(id)).result()).to.equal('COMPLETED');
      const done = await getOp(c, id);
      expect(done.currentState.status).to.equal('COMPLETED');
      expect(done.transactions).to.have.length(1);
      expect(done.transactions[0]).to.deep.include({ direction: 'DEBIT', status: 'COMPLETED' });
      expect(await payoutsAtPsp(idEnvio)).to.have.length(1);
      expect(
        await count(`select count(*) as n from events where resource_id = ? and type = 'OPERATION_COMPLETED'`, [id]),
      ).to.equal(1);
      expect(await stuckIds()).to.not.include(id);
      // Every run, the first and the continued ones, replays on this code.
      for (const run of await runs(operationWorkflowId(id))) {
        await replayOnCurrentCode(run.history, run.runId);
      }
    });
    expect(await balance(c, accountId, 'BRL')).to.deep.equal({
      available: new Decimal(before.available).minus('10.00').toFixed(2),
      held: before.held,
      total: new Decimal(before.total).minus('10.00').toFixed(2),
    });
  });

  it('a worker with no PSP: FAILED RAIL_NOT_CONFIGURED, the hold released, nothing sent', async () => {
    const ctx = await context(undefined);
    const before = await balance(c, accountId, 'BRL');
    await skipping.withWorker(ctx, async () => {
      const res = await withdrawToNewKey(c, accountId, `no-psp-${randomUUID()}@example.com`, '7.00', await api(ctx));
      expect(res.status).to.equal(201);
      const id: string = res.body.id;
      const handle = skipping.env.client.workflow.getHandle(operationWorkflowId(id));
      await eventually(
        () =>
          handle.describe().then(
            () => true,
            () => false,
          ),
        (started) => started,
        10000,
      );
      expect(await handle.result()).to.equal('FAILED');
      const failed = await getOp(c, id);
      expect(failed.currentState.reason.code).to.equal('RAIL_NOT_CONFIGURED');
      expect(failed.transactions).to.deep.equal([]);
      expect(await payoutsAtPsp(payoutIdFor(id))).to.deep.equal([]);
      expect(await stuckIds()).to.not.include(id);
    });
    expect(await balance(c, accountId, 'BRL')).to.deep.equal(before);
  });

  it('a return pending for hundreds of reads continues as new, then RETURNED once on DEVOLVIDO', async () => {
    const { psp, config, services } = await stack();
    const ctx = await context(config.pix.pspUrl);
    const paid = await psp.control('POST', '/pix', { valor: '8.00', chave: config.pix.receivingKey });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(201);
    const e2e: string = paid.body.endToEndId;
    const record = () => findPaymentByReference(systemEm(services.orm), 'PIX_KEY', e2e);
    const payment = (await eventually(record, (p) => p?.status === 'UNMATCHED', 30000, 100))!;
    await psp.control('POST', '/return-rules', { endToEndId: e2e, status: 'EM_PROCESSAMENTO' });
    await skipping.withWorker(ctx, async () => {
      expect(await returnPayment(ctx, payment.id, 'sent back')).to.deep.include({ status: 'RETURNING' });
      const returnId = (await record())!.returnId!;
      const returnsAtPsp = async () =>
        ((await psp.control('GET', '/state')).body.received.find((p: { endToEndId: string }) => p.endToEndId === e2e)
          .devolucoes ?? []) as unknown[];
      await eventually(returnsAtPsp, (d) => d.length === 1, 30000);
      // Six hours: each of a return's reads is two activities (its record, then the PSP), seventeen events, so a run
      // holds about 240 of them and six hours of reads a minute apart (about 360) make more than one run holds.
      await skipping.env.sleep('6 hours');
      expect((await record())!.status).to.equal('RETURNING');
      const continued = await runs(paymentReturnWorkflowId(returnId), 'railFollowReturn');
      expect(
        continued.reduce((n, r) => n + r.reads, 0),
        'return reads in 6 hours',
      ).to.be.above(300);
      expect(continued.length, 'runs').to.be.at.least(2);
      expect(continued.slice(1).map((r) => r.end)).to.satisfy((ends: string[]) =>
        ends.every((e) => e === 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW'),
      );
      expect(Math.max(...continued.map((r) => r.events))).to.be.below(5000);
      const settle = await psp.control('POST', `/pix/${e2e}/devolucao/${returnId}/settle`, { status: 'DEVOLVIDO' });
      expect(settle.status).to.equal(204);
      expect(await skipping.env.client.workflow.getHandle(paymentReturnWorkflowId(returnId)).result()).to.equal(
        'RETURNED',
      );
      expect((await record())!.status).to.equal('RETURNED');
      expect(await returnsAtPsp()).to.have.length(1);
      for (const run of await runs(paymentReturnWorkflowId(returnId), 'railFollowReturn')) {
        await replayOnCurrentCode(run.history, run.runId);
      }
    });
  });
});
