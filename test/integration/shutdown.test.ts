// Graceful shutdown of the real processes: SIGTERM while work is in flight. Requests (and activities) are held
// in flight by a row lock this test takes on the balances they must update, so the signal provably lands while
// they run; the lock is released after the signal.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { systemEm, tenantEm } from '../../db/orm';
import { createTransfer } from '../../services/operations/transfer';
import type { ServiceContext } from '../../services/context';
import { operationWorkflowId } from '../../workflows/ids';
import { activeAccount } from '../helpers/fixtures';
import { fund, untilStatus } from '../helpers/money';
import { eventually, newCustomer, stack } from '../helpers/stack';
import { exitWithin, killAll, spawnApi, spawnWorker } from '../helpers/processes';

/** A transaction holding FOR UPDATE locks on the BRL balance rows of `accountIds` until release(). */
async function lockBalances(accountIds: string[]) {
  const pg = new PgClient({ connectionString: process.env.DATABASE_URL });
  await pg.connect();
  await pg.query('begin');
  await pg.query(`select 1 from balances where account_id = any($1::uuid[]) and asset = 'BRL' for update`, [
    accountIds,
  ]);
  return {
    async release() {
      await pg.query('commit');
      await pg.end();
    },
  };
}

/** Backends of this database waiting for a lock. */
async function lockWaiters(): Promise<number> {
  const { services } = await stack();
  const rows = await systemEm(services.orm).execute(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
  );
  return rows[0].n as number;
}

async function fundedPair() {
  const c = await newCustomer('Shutdown Ltda');
  const source = await activeAccount(c, ['BRL']);
  const target = await activeAccount(c, ['BRL']);
  await fund(c, source.id, 'BRL', '1000.00');
  await fund(c, target.id, 'BRL', '1.00'); // a BRL balance row exists to lock on both sides
  return { c, source, target };
}

describe('graceful shutdown under load', function () {
  this.timeout(180000);
  after(killAll);

  it(
    'API: SIGTERM answers every accepted request for real (201), refuses new ones, drains readiness and ' + 'exits 0',
    async () => {
      const { config } = await stack();
      const { c, source, target } = await fundedPair();
      // On the test stack's task queue: its worker runs what this API starts.
      const api = await spawnApi('api', config.taskQueue, {
        SHUTDOWN_DELAY_SECONDS: '2',
        SHUTDOWN_GRACE_SECONDS: '25',
        LOG_LEVEL: 'info',
      });
      const base = api.url;

      const lock = await lockBalances([source.id, target.id]);
      let released = false;
      try {
        const waitersBefore = await lockWaiters();
        const requests = Array.from({ length: 5 }, () =>
          fetch(`${base}/api/operations/transfer`, {
            method: 'POST',
            headers: { ...c.auth, 'Content-Type': 'application/json', 'X-Idempotency-Key': randomUUID() },
            body: JSON.stringify({
              sourceAccountId: source.id,
              targetAccountId: target.id,
              amount: { value: '10.00', asset: 'BRL' },
            }),
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string; code?: string } })),
        );
        // In flight: all five were accepted and wait on our lock (or behind each other) inside their transactions.
        await eventually(lockWaiters, (n) => n >= waitersBefore + 5, 30000, 50);

        api.child.kill('SIGTERM');
        // Draining: still accepting for SHUTDOWN_DELAY_SECONDS, but not ready, so a load balancer moves away.
        // (The signal is handled a moment after kill() returns.)
        const ready = await eventually(
          () => fetch(`${base}/readyz`).then(async (r) => ({ status: r.status, body: await r.json() })),
          (r) => r.status !== 200,
          1500,
          20,
        );
        expect(ready.status).to.equal(503);
        expect(ready.body).to.deep.include({ status: 'draining', checks: {} });
        // Then the port closes while the accepted requests are still running.
        await eventually(
          () =>
            fetch(`${base}/healthz`).then(
              () => 'open',
              () => 'refused',
            ),
          (s) => s === 'refused',
          15000,
          100,
        );
        expect(api.alive(), 'the API waits for its in-flight requests').to.equal(true);

        await lock.release();
        released = true;
        const answers = await Promise.all(requests);
        expect(
          answers.map((a) => a.status),
          JSON.stringify(answers),
        ).to.deep.equal([201, 201, 201, 201, 201]);
        const exit = await exitWithin(api, 15000);
        expect(exit, api.output()).to.deep.equal({ code: 0, signal: null });

        // Nothing was cut short: each accepted transfer's workflow was started and it completes.
        for (const a of answers) await untilStatus(c, a.body.id, 'COMPLETED', 30000);
      } finally {
        if (!released) await lock.release();
      }
    },
  );

  it('worker: SIGTERM lets the in-flight activity finish, exits 0, and another worker completes the rest', async () => {
    const { services, config } = await stack();
    const { c, source, target } = await fundedPair();
    const taskQueue = `cambio-shutdown-${randomUUID()}`;
    const ctx: ServiceContext = { ...services, config: { ...config, taskQueue } };
    // Created before any worker polls this queue; their workflows wait for one.
    const ops = [];
    for (let i = 0; i < 2; i++) {
      ops.push(
        await createTransfer(ctx, tenantEm(services.orm, c.customerId), {
          sourceAccountId: source.id,
          targetAccountId: target.id,
          amount: { value: '5.00', asset: 'BRL' },
        }),
      );
    }
    const ids = ops.map((o) => o.id);
    const statusOf = async () =>
      (
        (await systemEm(services.orm).execute('select status from operations where id in (?) order by status', [
          ids,
        ])) as { status: string }[]
      ).map((r) => r.status);

    const lock = await lockBalances([source.id, target.id]);
    let released = false;
    try {
      const waitersBefore = await lockWaiters();
      const first = await spawnWorker('worker-1', taskQueue, {
        pollers: 0,
        env: { SHUTDOWN_GRACE_SECONDS: '20', LOG_LEVEL: 'info' },
      });
      // Its settle activity is running, blocked on our lock.
      await eventually(
        async () => {
          if (!first.alive()) throw new Error(`worker exited early:\n${first.output()}`);
          return lockWaiters();
        },
        (n) => n > waitersBefore,
        90000,
        100,
      );
      first.child.kill('SIGTERM');
      // It has taken the signal in (its log says so) and is still there; the exit code and COMPLETED below, once
      // the lock is released, show the activity finished in this worker before it left.
      await eventually(
        async () => first.output(),
        (out) => out.includes('stopping worker'),
        10000,
        20,
      );
      expect(first.alive(), 'the worker waits for its in-flight activity').to.equal(true);
      expect(await statusOf()).to.deep.equal(['REQUESTED', 'REQUESTED']);

      await lock.release();
      released = true;
      const exit = await exitWithin(first, 25000);
      expect(exit, first.output()).to.deep.equal({ code: 0, signal: null });
      // The activity that was running when the signal came finished in that worker.
      expect(await statusOf()).to.include('COMPLETED');
    } finally {
      if (!released) await lock.release();
    }

    // Nothing lost: a new worker takes over whatever was left, and each transfer settled exactly once.
    const second = await spawnWorker('worker-2', taskQueue, { pollers: 0, env: { LOG_LEVEL: 'info' } });
    for (const id of ids) await untilStatus(c, id, 'COMPLETED', 90000);
    for (const id of ids) {
      await eventually(
        async () => (await services.temporal.workflow.getHandle(operationWorkflowId(id)).describe()).status.name,
        (s) => s === 'COMPLETED',
        60000,
        250,
      );
    }
    const settles: { n: number }[] = await systemEm(services.orm).execute(
      `select operation_id, count(*)::int as n from ledger_transactions where operation_id in (?) and key ` +
        `like '%:settle' group by operation_id`,
      [ids],
    );
    expect(settles.map((s) => s.n)).to.deep.equal([1, 1]);
    // Both settlements may have run in the first worker (each was in flight there, as a local activity): the
    // second is then still starting, and a SIGTERM before it listens for one would kill it. Stop it once it runs.
    await eventually(
      async () => second.output(),
      (out) => out.includes('Cambio worker running'),
      90000,
      100,
    );
    second.child.kill('SIGTERM');
    expect(await exitWithin(second, 30000)).to.deep.equal({ code: 0, signal: null });
  });
});
