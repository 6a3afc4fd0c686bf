// The outbox relay: a COMMIT wakes the relay of the rows' task queue, several relays never start the same row,
// and a pass that fails (as a worker dying mid-batch would) leaves its rows for the next one.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { systemEm } from '../../db/orm';
import { inTransaction } from '../../db/transaction';
import { addWorkflowStart } from '../../db/repositories/outbox';
import { relayWorkflowStarts } from '../../worker/workflow-start-relay';
import { SqlBatch } from '../../db/batch';
import { MAX_CONCURRENT_PASSES, startWorkflowStartRelay, WorkflowStartRelay } from '../../worker/workflow-start-relay';
import { queueWorkerOptions } from '../../worker/queues';
import { RELAY_BATCH } from '../../worker/relay-limits';
import { eventually, idem, newCustomer, stack, workflowBundleEnv } from '../helpers/stack';
import { activeAccount } from '../helpers/fixtures';
import { Receiver } from '../helpers/receiver';
import { operationWorkflowId } from '../../workflows/ids';
import {
  newCustomerId,
  removeRequestedOperations,
  requestedOperations,
  runOperation,
} from '../helpers/requested-operations';

/** The real client, with every workflow start counted per workflow id and passed through `before` first. */
function countingTemporal(real: Client, before: () => Promise<void> = async () => {}) {
  const starts: string[] = [];
  const workflow = new Proxy(real.workflow, {
    get(target, prop) {
      if (prop === 'start') {
        return async (type: string, opts: { workflowId: string }) => {
          starts.push(opts.workflowId);
          await before();
          return target.start(type, opts as never);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const temporal = new Proxy(real, { get: (t, p) => (p === 'workflow' ? workflow : Reflect.get(t, p, t)) }) as Client;
  return { temporal, starts };
}

/**
 * `n` outbox rows for `queue`, committed together (one transaction, as a fan-out writes them), of a workflow type
 * no worker runs unless `workflow` names one.
 */
async function outboxRows(
  queue: string,
  n: number,
  workflow: { workflowType: string; args: unknown[] } = { workflowType: 'relayTestWorkflow', args: [] },
): Promise<string[]> {
  const { services } = await stack();
  const ids = Array.from({ length: n }, () => `relay-test-${randomUUID()}`);
  await inTransaction(systemEm(services.orm), async (tx) => {
    const batch = new SqlBatch();
    for (const workflowId of ids) addWorkflowStart(batch, queue, { workflowId, ...workflow, searchAttributes: {} });
    await batch.run(tx);
  });
  return ids;
}

const remaining = async (ids: string[]) => {
  const { services } = await stack();
  return Number(
    (
      await systemEm(services.orm).execute('select count(*)::int as n from workflow_starts where workflow_id in (?)', [
        ids,
      ])
    )[0].n,
  );
};

const status = async (temporal: Client, id: string) => (await temporal.workflow.getHandle(id).describe()).status.name;

/** Waits up to `ms` for the outbox rows of `ids` to go (started and cleared by a relay). */
async function untilLeftTheOutbox(ids: string[], ms: number): Promise<void> {
  await eventually(
    () => remaining(ids),
    (n) => n === 0,
    ms,
    20,
  );
}

/** Waits up to `ms` for the outbox rows of `ids` to go, then expects each workflow running. */
async function leaveTheOutboxRunning(ids: string[], ms: number): Promise<void> {
  const { services } = await stack();
  await untilLeftTheOutbox(ids, ms);
  for (const id of ids) expect(await status(services.temporal, id)).to.equal('RUNNING');
}

describe('outbox relay', function () {
  this.timeout(60000);
  // Task queues nobody polls and no other relay serves: the started workflows just wait, and are terminated
  // afterwards. Short names: a relay's connection is named after its queue.
  const newQueue = () => `relay-${randomUUID()}`;
  const started: string[] = [];
  const relays: WorkflowStartRelay[] = [];

  /** A relay that runs on wake-ups alone (its sweep is an hour away). */
  async function wakeOnlyRelay(
    queue: string,
    temporal: Client,
    opts: { maxStartedPerCustomer?: number } = {},
  ): Promise<WorkflowStartRelay> {
    const { services } = await stack();
    const relay = startWorkflowStartRelay({
      orm: services.orm,
      temporal,
      taskQueue: queue,
      databaseUrl: services.config.databaseUrl,
      eager: false,
      sweepIntervalMs: 3_600_000,
      onError: () => undefined,
      ...opts,
    });
    relays.push(relay);
    // Listening once its connection shows up in Postgres, waiting.
    await eventually(
      async () =>
        (
          await systemEm(services.orm).execute(
            `select count(*)::int as n from pg_stat_activity where application_name = ? and query ilike 'listen%'`,
            [`cambio-relay ${queue}`],
          )
        )[0].n,
      (n) => n === 1,
    );
    return relay;
  }

  after(async () => {
    const { services } = await stack();
    await Promise.all(relays.map((r) => r.stop()));
    await removeRequestedOperations();
    await Promise.all(
      started.map((id) =>
        services.temporal.workflow
          .getHandle(id)
          .terminate('test cleanup')
          .catch(() => undefined),
      ),
    );
  });

  it("a COMMIT wakes the relay of its rows' queue, which starts them; other queues' rows are not its own", async () => {
    const { services } = await stack();
    const queue = newQueue();
    const counted = countingTemporal(services.temporal);
    await wakeOnlyRelay(queue, counted.temporal);
    const others = await outboxRows(newQueue(), 2);
    const ids = await outboxRows(queue, 3);
    started.push(...ids);
    await leaveTheOutboxRunning(ids, 10000);
    expect(counted.starts.sort()).to.deep.equal([...ids].sort());
    expect(await remaining(others), 'rows of another queue stay for its own relay').to.equal(2);
    await systemEm(services.orm).execute('delete from workflow_starts where workflow_id in (?)', [others]);
  });

  it('one COMMIT of more rows than a pass claims: every row is started from that one wake-up', async () => {
    const { services } = await stack();
    const queue = newQueue();
    const counted = countingTemporal(services.temporal);
    await wakeOnlyRelay(queue, counted.temporal);
    // Two full batches and a part: the passes after a full one run without a wake-up of their own.
    const ids = await outboxRows(queue, 2 * RELAY_BATCH + 5);
    started.push(...ids);
    await untilLeftTheOutbox(ids, 30000);
    expect(counted.starts.sort(), 'each row started once').to.deep.equal([...ids].sort());
  });

  it("a row its customer's window holds back starts when one of its started operations runs, unannounced", async () => {
    const { services } = await stack();
    const queue = newQueue();
    const a = await newCustomerId();
    const [running] = await requestedOperations(a, 1);
    const [waiting] = await requestedOperations(a, 1, queue);
    started.push(waiting);
    await wakeOnlyRelay(queue, services.temporal, { maxStartedPerCustomer: 1 });
    // The relay's first pass found A at its window of one.
    await new Promise((r) => setTimeout(r, 500));
    expect(await remaining([waiting])).to.equal(1);
    // The operation runs: nothing is committed to the outbox, and the sweep is an hour away.
    await runOperation(running);
    await leaveTheOutboxRunning([waiting], 5000);
  });

  it("a customer at its window waits for its operations' starts, never for its webhook deliveries", async () => {
    // The stack's own relays, as the worker runs them: the window on the main queue, none on the webhook queue.
    const { services, http } = await stack();
    const c = await newCustomer();
    const receiver = await new Receiver().start();
    try {
      const resources = [{ name: 'OPERATION', events: ['OPERATION_REQUESTED'] }];
      const sub = await http.post('/api/subscriptions').set(c.auth).set(idem()).send({ url: receiver.url, resources });
      expect(sub.status).to.equal(201);
      const account = await activeAccount(c, ['BRL']);
      // As many operations started and not yet run as the window allows.
      await requestedOperations(c.customerId, services.config.maxStartedOperationsPerCustomer);
      const quote = await http
        .post('/api/quotes')
        .set(c.auth)
        .set(idem())
        .send({ accountId: account.id, sourceAsset: 'BRL', targetAsset: 'BRL', sourceAmount: '10.00' });
      const deposit = await http
        .post('/api/operations/deposit')
        .set(c.auth)
        .set(idem())
        .send({ accountId: account.id, quoteId: quote.body.id, fundingInstruction: { rail: 'PIX_KEY' } });
      expect(deposit.status).to.equal(201);
      const delivered = await eventually(
        async () => receiver.received.filter((r) => JSON.parse(r.body).id === deposit.body.id),
        (found) => found.length === 1,
        15000,
        20,
      );
      expect(delivered[0].headers['x-event-type']).to.equal('OPERATION_REQUESTED');
      const depositWorkflow = operationWorkflowId(deposit.body.id);
      expect(await remaining([depositWorkflow]), "the deposit's own start waits for the window").to.equal(1);
      // Its started operations run: the deposit starts.
      await removeRequestedOperations();
      await leaveTheOutboxRunning([depositWorkflow], 10000);
    } finally {
      await receiver.stop();
    }
  });

  it('rows committed while passes wait on slow starts get passes of their own, up to the bound', async () => {
    const { services } = await stack();
    const queue = newQueue();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const counted = countingTemporal(services.temporal, () => gate);
    await wakeOnlyRelay(queue, counted.temporal);
    // Each row commits while every pass before it is held in its start: it gets a pass of its own at once.
    const held: string[] = [];
    for (let i = 1; i <= MAX_CONCURRENT_PASSES; i++) {
      held.push(...(await outboxRows(queue, 1)));
      await eventually(
        async () => counted.starts.length,
        (n) => n === i,
        10000,
        10,
      );
    }
    started.push(...held);
    expect([...counted.starts].sort()).to.deep.equal([...held].sort());
    // Past the bound, rows wait for a pass to end. What must not happen (a pass claiming them now) has nothing to
    // wait for: a short grace instead.
    const later = await outboxRows(queue, 2);
    started.push(...later);
    await new Promise((r) => setTimeout(r, 200));
    expect(await remaining(later), 'not claimed while the passes run').to.equal(2);
    expect(counted.starts).to.have.length(MAX_CONCURRENT_PASSES);
    release();
    await leaveTheOutboxRunning([...held, ...later], 10000);
  });

  it('a relay whose connection was cut listens again, and starts what committed meanwhile', async () => {
    const { services } = await stack();
    const queue = newQueue();
    await wakeOnlyRelay(queue, services.temporal);
    await systemEm(services.orm).execute(
      `select pg_terminate_backend(pid) from pg_stat_activity where application_name = ?`,
      [`cambio-relay ${queue}`],
    );
    const ids = await outboxRows(queue, 2);
    started.push(...ids);
    await leaveTheOutboxRunning(ids, 10000);
  });

  it("an idle worker with its queue's options takes the relay's starts eagerly, on both workflow queues", async () => {
    const { services } = await stack();
    const { config } = services;
    // The worker's own connection, shared by the relay's client, as in worker/main.ts: only then can a start be
    // eager. A review round waits for its decision: its first task runs and the workflow just waits.
    const connection = await NativeConnection.connect({ address: config.temporalAddress });
    try {
      const temporal = new Client({ connection, namespace: config.temporalNamespace });
      for (const role of ['main', 'webhooks'] as const) {
        const queue = newQueue();
        const worker = await Worker.create({
          connection,
          namespace: config.temporalNamespace,
          taskQueue: queue,
          workflowBundle: { codePath: workflowBundleEnv().WORKFLOW_BUNDLE_PATH },
          ...queueWorkerOptions(role),
        });
        await worker.runUntil(async () => {
          const [id] = await outboxRows(queue, 1, {
            workflowType: 'accountReviewWorkflow',
            args: [{ accountId: randomUUID(), customerId: randomUUID() }],
          });
          started.push(id);
          expect(await relayWorkflowStarts(services.orm, temporal, queue, { eager: true })).to.equal(1);
          const history = await temporal.workflow.getHandle(id).fetchHistory();
          const attrs = history.events?.[0]?.workflowExecutionStartedEventAttributes;
          const eager = attrs?.eagerExecutionAccepted;
          expect(eager, `${role} queue: the first task came back in the start's answer`).to.equal(true);
        });
      }
    } finally {
      await connection.close();
    }
  });

  it('two concurrent passes claim disjoint rows: each workflow is started once and every row is cleared', async () => {
    const { services } = await stack();
    const queue = newQueue();
    const ids = await outboxRows(queue, 12);
    started.push(...ids);
    const slow = () => new Promise<void>((r) => setTimeout(r, 30));
    const a = countingTemporal(services.temporal, slow);
    const b = countingTemporal(services.temporal, slow);
    const [na, nb] = await Promise.all([
      relayWorkflowStarts(services.orm, a.temporal, queue, { batch: 6 }),
      relayWorkflowStarts(services.orm, b.temporal, queue, { batch: 6 }),
    ]);
    expect(na + nb).to.equal(12);
    const all = [...a.starts, ...b.starts];
    expect(all.sort(), 'no row started by both relays').to.deep.equal([...ids].sort());
    expect(await remaining(ids)).to.equal(0);
    for (const id of ids) expect(await status(services.temporal, id)).to.equal('RUNNING');
  });

  it(
    'rows claimed by a pass are skipped by others while it runs, and stay ' + 'for the next pass when it fails',
    async () => {
      const { services } = await stack();
      const queue = newQueue();
      const ids = await outboxRows(queue, 3);
      started.push(...ids);
      let fail!: (err: Error) => void;
      const gate = new Promise<void>((_, reject) => {
        fail = reject;
      });
      gate.catch(() => undefined);
      const dying = countingTemporal(services.temporal, () => gate);
      const first = relayWorkflowStarts(services.orm, dying.temporal, queue).then(
        () => undefined,
        (err: Error) => err,
      );
      // The first pass holds its claims (blocked in its starts): another pass finds nothing to do.
      await eventually(
        async () => dying.starts.length,
        (n) => n > 0,
        10000,
        10,
      );
      const other = countingTemporal(services.temporal);
      expect(await relayWorkflowStarts(services.orm, other.temporal, queue)).to.equal(0);
      expect(other.starts).to.deep.equal([]);

      fail(new Error('simulated: the worker lost Temporal mid-batch'));
      const err = await first;
      expect(err).to.be.instanceOf(AggregateError);
      expect(await remaining(ids)).to.equal(3);
      // The failed rows back off before their next attempt; once it is due, the next pass starts them.
      expect(await relayWorkflowStarts(services.orm, other.temporal, queue)).to.equal(0);
      await eventually(
        () => relayWorkflowStarts(services.orm, other.temporal, queue),
        (n) => n === 3,
        10000,
        100,
      );
      expect(await remaining(ids)).to.equal(0);
    },
  );

  it(
    'holds no transaction while its starts wait on Temporal, and a relay that died leaves its rows to the ' +
      'next after the lease',
    async () => {
      const { services } = await stack();
      const queue = newQueue();
      const ids = await outboxRows(queue, 2);
      started.push(...ids);
      let hang!: () => void;
      const gate = new Promise<void>((r) => {
        hang = r;
      });
      const stuck = countingTemporal(services.temporal, () => gate);
      const pass = relayWorkflowStarts(services.orm, stuck.temporal, queue, { leaseMs: 1500 });
      await eventually(
        async () => stuck.starts.length,
        (n) => n >= 2,
        10000,
        10,
      );
      // Blocked in Temporal: no session of ours sits in a transaction, and the rows are leased, not locked.
      const inTx = await systemEm(services.orm).execute(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and state like ` +
          `'idle in transaction%' and pid <> pg_backend_pid()`,
      );
      expect(inTx[0].n).to.equal(0);
      const leased = await systemEm(services.orm).execute(
        'select count(*)::int as n from workflow_starts where workflow_id in (?) and claimed_until > now()',
        [ids],
      );
      expect(leased[0].n).to.equal(2);
      // As if the stuck relay died: another claims the rows once the lease has run out, and starts them.
      const other = countingTemporal(services.temporal);
      expect(await relayWorkflowStarts(services.orm, other.temporal, queue)).to.equal(0);
      await eventually(
        () => relayWorkflowStarts(services.orm, other.temporal, queue),
        (n) => n === 2,
        10000,
        100,
      );
      expect(await remaining(ids)).to.equal(0);
      hang();
      await pass;
    },
  );

  it('does not stall behind rows whose start always fails', async () => {
    const { services } = await stack();
    const queue = newQueue();
    const poison = await outboxRows(queue, 60);
    const good = await outboxRows(queue, 1);
    started.push(...good);
    const bad = new Set(poison);
    let current = '';
    const failing = countingTemporal(services.temporal, async () => {
      if (bad.has(current)) throw new Error('simulated: this start is refused every time');
    });
    // The counting proxy records the id before `before` runs: keep the last one to decide.
    const decide = new Proxy(failing.temporal, {
      get(t, p) {
        if (p !== 'workflow') return Reflect.get(t, p, t);
        const wf = Reflect.get(t, p, t);
        return new Proxy(wf, {
          get(w, q) {
            if (q !== 'start') return Reflect.get(w, q, w);
            return (type: string, opts: { workflowId: string }) => {
              current = opts.workflowId;
              return w.start(type, opts as never);
            };
          },
        });
      },
    }) as Client;
    for (let pass = 0; pass < 6 && (await remaining(good)) > 0; pass++) {
      await relayWorkflowStarts(services.orm, decide, queue).catch(() => undefined);
    }
    expect(await remaining(good), 'the good row was started within a few passes').to.equal(0);
    expect(await status(services.temporal, good[0])).to.equal('RUNNING');
    expect(await remaining(poison), 'the poison rows wait, backing off').to.equal(60);
    await systemEm(services.orm).execute('delete from workflow_starts where workflow_id in (?)', [poison]);
  });
});
