import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Client as PgClient } from 'pg';
import { Client, Connection, type ScheduleDescription, type ScheduleHandle } from '@temporalio/client';
import { systemEm } from '../../db/orm';
import { createActivities } from '../../activities';
import { ensureSchedules, periodicJobs, scheduleId } from '../../worker/schedules';
import { issueStatements } from '../../statements/issue';
import { activeAccount } from '../helpers/fixtures';
import { fund } from '../helpers/money';
import { eventually, newCustomer, stack } from '../helpers/stack';
import { getStatement } from '../helpers/statements';
import { cambio, cambioFails } from '../helpers/cli';
import { workflowBundle } from '../helpers/workflow-bundle';
import { GrpcStallProxy } from '../helpers/grpc-stall';
import { freePort } from '../helpers/processes';

// The test's own STATEMENT_INTERVAL (the product's default is a month): short, so that two runs and two idle periods
// take seconds. Runs never overlap (SKIP): a run slower than a period delays the next one, it does not double it.
const INTERVAL = 'PT2S';
const INTERVAL_MS = 2000;
const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/** Pauses the schedule for the reads that follow, and waits until no run of it is still going. */
async function pauseAndSettle(handle: ScheduleHandle): Promise<void> {
  await handle.pause('test: reading back');
  await eventually(
    () => handle.describe(),
    (d) => d.info.runningActions.length === 0,
    120_000,
    250,
  );
}

describe('Periodic jobs as Temporal Schedules', function () {
  this.timeout(180000);

  let client: Client;
  let second: Worker | undefined;
  let secondRun: Promise<void> | undefined;
  const cfg = async () => ({ taskQueue: (await stack()).config.taskQueue, statementInterval: INTERVAL });
  const statementsJob = async () =>
    periodicJobs(await cfg()).filter((j) => j.workflowType === 'issueStatementsWorkflow');

  before(async () => {
    const s = await stack();
    client = s.services.temporal;
    // A second worker on the same task queue, as a second worker process would be.
    const activities = createActivities({
      config: s.config,
      orm: s.services.orm,
      rates: s.services.rates,
      temporal: client,
    });
    second = await Worker.create({
      connection: await NativeConnection.connect({ address: s.config.temporalAddress }),
      namespace: s.config.temporalNamespace,
      taskQueue: s.config.taskQueue,
      workflowBundle: await workflowBundle(),
      activities,
    });
    secondRun = second.run();
  });

  after(async () => {
    const handle = client?.schedule.getHandle(scheduleId(await cfg(), 'statements'));
    await handle?.delete().catch(() => undefined);
    second?.shutdown();
    await secondRun;
  });

  it('two workers create one schedule; each run happens once; issued statements read back', async () => {
    const c = await newCustomer('Scheduled Ltda');
    const account = await activeAccount(c, ['BRL']);
    await fund(c, account.id, 'BRL', '42.00');
    const config = await cfg();
    const jobs = await statementsJob();
    // Two workers starting at once: one creates, the other finds it (ScheduleAlreadyRunning) and goes on.
    await Promise.all([ensureSchedules(client, config, jobs), ensureSchedules(client, config, jobs)]);
    // The list is read from Temporal's visibility store, which a new schedule reaches a moment after its creation.
    const named = await eventually(
      async () => {
        const ids: string[] = [];
        for await (const s of client.schedule.list()) ids.push(s.scheduleId);
        return ids.filter((id) => id === jobs[0].id);
      },
      (ids) => ids.length > 0,
      10_000,
      200,
    );
    expect(named).to.have.length(1);

    const handle = client.schedule.getHandle(jobs[0].id);
    const described = await eventually(
      () => handle.describe(),
      (d) => d.info.recentActions.length >= 2,
      30000,
      500,
    );
    // Each action started one workflow, and no workflow ran twice.
    const runs = described.info.recentActions.map((a) => a.action.workflow.workflowId);
    expect(new Set(runs).size).to.equal(runs.length);
    // Held still from here on (a run every period would add statements between the reads below).
    await pauseAndSettle(handle);
    const em = systemEm((await stack()).services.orm);
    const rows = (await em.execute(
      `select id, period_start, period_end from statements where account_id = ? order by period_start`,
      [account.id],
    )) as Array<{ id: string }>;
    expect(rows.length).to.be.greaterThan(0);
    const events = (await em.execute(
      `select resource_id, count(*)::int as n from events where type = 'STATEMENT_ISSUED' and customer_id = ?
       group by resource_id`,
      [c.customerId],
    )) as Array<{ resource_id: string; n: number }>;
    expect(events.map((e) => e.resource_id).sort()).to.deep.equal(rows.map((r) => r.id).sort());
    expect(events.every((e) => e.n === 1)).to.equal(true);

    // Read back: the list, the JSON exactly as hashed, the same bytes as the statement on demand, and again issued.
    const { http } = await stack();
    const list = await http
      .get('/api/statements')
      .query({ filters: `account.id[eq]=${account.id};asset[eq]=BRL`, limit: '100' })
      .set(c.auth);
    expect(list.status).to.equal(200);
    expect(list.body.data.map((s: { id: string }) => s.id).sort()).to.deep.equal(rows.map((r) => r.id).sort());
    const listed = list.body.data[0] as { id: string; sha256: string; periodStart: string; periodEnd: string };
    const stored = await http.get(`/api/statements/${listed.id}`).set(c.auth).buffer(true);
    expect(stored.status).to.equal(200);
    expect(sha256(stored.text)).to.equal(listed.sha256);
    const onDemand = await getStatement(c, account.id, {
      asset: 'BRL',
      periodStart: listed.periodStart,
      periodEnd: listed.periodEnd,
    });
    expect(onDemand.text).to.equal(stored.text);
    const s = await stack();
    const again = await issueStatements(
      { orm: s.services.orm, config: { statementInterval: INTERVAL, webhookTaskQueue: s.config.webhookTaskQueue } },
      new Date(listed.periodEnd),
    );
    expect(again.issued).to.equal(0);
    expect((await http.get(`/api/statements/${listed.id}`).set(c.auth)).text).to.equal(stored.text);
    // Issued once more from nothing (its row and body removed), the closed period gives the same bytes.
    const [gone] = (await em.execute('delete from statements where id = ? returning body_id', [listed.id])) as Array<{
      body_id: string;
    }>;
    await em.execute('delete from statement_chunks where body_id = ?', [gone.body_id]);
    await em.execute('delete from events where dedupe_key = ?', [`${listed.id}:STATEMENT_ISSUED`]);
    const reissued = await issueStatements(
      { orm: s.services.orm, config: { statementInterval: INTERVAL, webhookTaskQueue: s.config.webhookTaskQueue } },
      new Date(listed.periodEnd),
    );
    expect(reissued.issued).to.equal(1);
    const back = await http.get(`/api/statements/${listed.id}`).set(c.auth).buffer(true);
    expect(back.text).to.equal(stored.text);
    expect(sha256(back.text)).to.equal(listed.sha256);
    const csv = await http.get(`/api/statements/${listed.id}`).query({ format: 'csv' }).set(c.auth);
    expect(csv.status).to.equal(200);
    expect(csv.text.split('\r\n')[0]).to.match(/^id,bookedAt,/);
    const other = await newCustomer('Other Ltda');
    expect((await http.get(`/api/statements/${listed.id}`).set(other.auth)).status).to.equal(404);
    const filtered = await http
      .get('/api/statements')
      .query({ filters: `periodStart[gte]=${new Date(Date.now() + 60_000).toISOString()}` })
      .set(c.auth);
    expect(filtered.body.data).to.deep.equal([]);
  });

  it('a changed STATEMENT_INTERVAL reaches the existing schedule at a worker start; paused stays paused', async () => {
    // A queue of its own: the schedule never fires within the test (month, then day) and is deleted after.
    const config = { taskQueue: `${(await stack()).config.taskQueue}-interval-change`, statementInterval: 'month' };
    const monthly = periodicJobs(config).filter((j) => j.workflowType === 'issueStatementsWorkflow');
    const handle = client.schedule.getHandle(monthly[0].id);
    try {
      await ensureSchedules(client, config, monthly);
      await handle.pause('test: operator hold');
      // The operator sets STATEMENT_INTERVAL=day and restarts the workers.
      const daily = { ...config, statementInterval: 'day' };
      await ensureSchedules(
        client,
        daily,
        periodicJobs(daily).filter((j) => j.workflowType === 'issueStatementsWorkflow'),
      );
      const d = await handle.describe();
      // Daily statements from now on, each run issuing a day: not a month's run a month from now.
      const [first, second] = d.info.nextActionTimes;
      expect(second.getTime() - first.getTime()).to.equal(24 * 3600_000);
      expect(d.action.type === 'startWorkflow' && d.action.args).to.deep.equal(['day']);
      // The operator's pause and its reason are kept.
      expect(d.state.paused).to.equal(true);
      expect(d.state.note).to.equal('test: operator hold');
    } finally {
      await handle.delete().catch(() => undefined);
    }
  });

  it("a worker's start that reads a schedule, then an operator's pause, then its update: the pause stays", async () => {
    const { config: stackConfig } = await stack();
    const config = { taskQueue: `${stackConfig.taskQueue}-pause-race`, statementInterval: 'month' };
    const monthly = periodicJobs(config).filter((j) => j.workflowType === 'issueStatementsWorkflow');
    const handle = client.schedule.getHandle(monthly[0].id);
    // A worker that starts with STATEMENT_INTERVAL=day reaches Temporal through a proxy that holds its update (its
    // fourth call: the connection's check, the create refused, the describe, the update) until the operator paused.
    const [host, port] = stackConfig.temporalAddress.split(':');
    const proxy = new GrpcStallProxy(await freePort(), { host, port: Number(port) }, 3, 'hold');
    await proxy.open();
    const connection = await Connection.connect({ address: `127.0.0.1:${proxy.port}` });
    const worker = new Client({ connection, namespace: stackConfig.temporalNamespace });
    try {
      await ensureSchedules(client, config, monthly);
      const daily = { ...config, statementInterval: 'day' };
      const starting = ensureSchedules(
        worker,
        daily,
        periodicJobs(daily).filter((j) => j.workflowType === 'issueStatementsWorkflow'),
      );
      await proxy.held;
      await handle.pause('operator: bank holiday');
      proxy.release();
      await starting;
      const d = await handle.describe();
      // The operator's pause and its reason are kept...
      expect(d.state.paused).to.equal(true);
      expect(d.state.note).to.equal('operator: bank holiday');
      // ...and the worker's config is applied all the same.
      expect(d.action.type === 'startWorkflow' && d.action.args).to.deep.equal(['day']);
    } finally {
      await handle.delete().catch(() => undefined);
      await connection.close();
      await proxy.close();
    }
  });

  it('a run held past its next period leaves no period without its statements', async () => {
    const c = await newCustomer('Held Periods Ltda');
    const account = await activeAccount(c, ['BRL']);
    await fund(c, account.id, 'BRL', '7.00');
    const [job] = await statementsJob();
    await ensureSchedules(client, await cfg(), [job]);
    const handle = client.schedule.getHandle(job.id);
    if ((await handle.describe()).state.paused) await handle.unpause('test: held periods');
    // A transaction that stays open holds each run (it could still book into the period: decision 0112), as a slow
    // posting or a Postgres outage would, for three periods.
    const pg = new PgClient({ connectionString: (await stack()).config.databaseUrl });
    await pg.connect();
    try {
      await new Promise((r) => setTimeout(r, INTERVAL_MS));
      await pg.query('begin');
      await pg.query('select txid_current()');
      await new Promise((r) => setTimeout(r, 3 * INTERVAL_MS));
      await pg.query('rollback');
    } finally {
      await pg.end();
    }
    // The held runs, then more: each run issues every account of the shard's database, seconds apart on a loaded
    // machine, so the test waits for them rather than for a fixed time.
    const em = systemEm((await stack()).services.orm);
    const issued = async () =>
      (await em.execute('select period_start, period_end from statements where account_id = ? order by period_start', [
        account.id,
      ])) as Array<{ period_start: Date; period_end: Date }>;
    await eventually(issued, (r) => r.length > 3, 90_000, 500);
    await pauseAndSettle(handle);
    const rows = await issued();
    expect(rows.length).to.be.greaterThan(3);
    // Every period from the first issued to the last issued has its statement: none was skipped.
    const gaps = rows
      .slice(1)
      .filter((r, i) => new Date(r.period_start).getTime() !== new Date(rows[i].period_end).getTime());
    expect(gaps.map((g) => new Date(g.period_start).toISOString())).to.deep.equal([]);
  });

  it('a paused schedule issues nothing; a trigger runs it once', async () => {
    const [job] = await statementsJob();
    await ensureSchedules(client, await cfg(), [job]);
    const handle = client.schedule.getHandle(job.id);
    await handle.pause('test: paused');
    // A run started before the pause finishes its issuing (over every account of the run's database): a paused
    // schedule starts nothing new, it does not cut what runs.
    const settled = await eventually(
      () => handle.describe(),
      (d) => d.info.runningActions.length === 0,
      120_000,
      250,
    );
    const before = settled.info.numActionsTaken;
    const em = systemEm((await stack()).services.orm);
    const count = async () => ((await em.execute('select count(*)::int as n from statements')) as [{ n: number }])[0].n;
    const issued = await count();
    await new Promise((r) => setTimeout(r, 2 * INTERVAL_MS + 500)); // two periods, and a margin
    const paused = await handle.describe();
    expect(paused.state.paused).to.equal(true);
    expect(paused.info.numActionsTaken).to.equal(before);
    expect(await count()).to.equal(issued);
    await handle.trigger();
    await eventually(
      () => handle.describe(),
      (d) => d.info.numActionsTaken === before + 1,
      20000,
      250,
    );
  });

  it('cambio schedule lists, pauses, unpauses and triggers a schedule, each action audited', async () => {
    // The CLI's own configuration: this run's task queue, STATEMENT_INTERVAL unset (month).
    const config = { taskQueue: (await stack()).config.taskQueue, statementInterval: 'month' };
    const jobs = periodicJobs(config);
    const drop = () =>
      Promise.all(
        jobs.map((j) =>
          client.schedule
            .getHandle(j.id)
            .delete()
            .catch(() => undefined),
        ),
      );
    await drop();
    // Only this test's audit rows: another file in the shard (the CLI outage sweep) may trigger event-purge too.
    const em = systemEm((await stack()).services.orm);
    const [{ last }] = (await em.execute(`select coalesce(max(seq), 0) as last from audit_log`)) as Array<{
      last: string;
    }>;
    try {
      // Before any worker created them: listed as not created, not an error.
      const none = JSON.parse((await cambio('schedule', 'list', '--json')).stdout) as Array<Record<string, unknown>>;
      expect(none.map((r) => [r.id, r.created])).to.deep.equal(jobs.map((j) => [j.id, false]));
      expect((await cambio('schedule', 'list')).stdout).to.match(/not created yet/);
      // Nothing to pause yet: a refusal in the error shape (before: Temporal's bare "schedule not found", no JSON).
      const early = await cambioFails('schedule', 'pause', 'event-purge', '--json');
      expect(early.body.code).to.equal('NOT_FOUND');
      expect(early.body.message).to.match(/not created yet/);
      await ensureSchedules(client, config, jobs);
      const listed = JSON.parse((await cambio('schedule', 'list', '--json')).stdout) as Array<Record<string, unknown>>;
      expect(listed.map((r) => [r.id, r.workflowType, r.paused])).to.deep.equal(
        jobs.map((j) => [j.id, j.workflowType, false]),
      );

      const purge = client.schedule.getHandle(scheduleId(config, 'event-purge'));
      const paused = await cambio('schedule', 'pause', 'event-purge', '--reason', 'disk maintenance');
      expect(paused.stdout.trim()).to.equal(`${purge.scheduleId}: pause done`);
      expect((await purge.describe()).state).to.deep.include({ paused: true, note: 'disk maintenance' });
      const human = (await cambio('schedule', 'list')).stdout.split('\n');
      expect(human.find((l) => l.startsWith(`${purge.scheduleId} `))).to.match(/ PAUSED /);
      // A trigger runs a paused schedule's job once (Temporal's rule); the operator is told it stays paused.
      const pausedRun = await cambio('schedule', 'trigger', 'event-purge');
      expect(pausedRun.stdout.trim()).to.equal(
        `${purge.scheduleId}: trigger done; the schedule stays paused (\`cambio schedule unpause\` resumes it)`,
      );
      expect((await purge.describe()).state.paused).to.equal(true);

      const unpaused = JSON.parse((await cambio('schedule', 'unpause', purge.scheduleId, '--json')).stdout);
      expect(unpaused).to.deep.equal({ id: purge.scheduleId, action: 'unpause', paused: false });
      expect((await purge.describe()).state.paused).to.equal(false);
      const triggered = JSON.parse((await cambio('schedule', 'trigger', 'event-purge', '--json')).stdout);
      expect(triggered).to.deep.equal({ id: purge.scheduleId, action: 'trigger', paused: false });
      // The triggered runs: the actions off the hourly grid (a test that crosses an hour also sees the tick).
      const offGrid = (d: ScheduleDescription) =>
        d.info.recentActions.filter((a) => a.scheduledAt.getTime() % 3_600_000 !== 0);
      await eventually(
        () => purge.describe(),
        (d) => offGrid(d).length === 2,
        20000,
        250,
      );

      const audited = (await em.execute(
        `select action, target, reason, operator, details->>'outcome' as outcome from audit_log
         where seq > ? and action like 'schedule.%' and target in (?, ?) order by seq`,
        [last, 'event-purge', purge.scheduleId],
      )) as Array<Record<string, string | null>>;
      // Each request audited before Temporal was asked (decision 0305); the refused one with its code.
      const operator = 'test-operator';
      expect(audited).to.deep.equal([
        { action: 'schedule.pause', target: 'event-purge', reason: null, operator, outcome: 'NOT_FOUND' },
        { action: 'schedule.pause', target: 'event-purge', reason: 'disk maintenance', operator, outcome: 'REQUESTED' },
        { action: 'schedule.trigger', target: 'event-purge', reason: null, operator, outcome: 'REQUESTED' },
        { action: 'schedule.unpause', target: purge.scheduleId, reason: null, operator, outcome: 'REQUESTED' },
        { action: 'schedule.trigger', target: 'event-purge', reason: null, operator, outcome: 'REQUESTED' },
      ]);
    } finally {
      await drop();
    }
  });
  it('cambio schedule pauses a schedule its config no longer has, which the worker left running', async () => {
    // A deployment that polled rates, then had its polled sources removed: the worker leaves the poll's schedule
    // (decision 0254) for the operator to pause. The CLI's configuration has no rates-poll job.
    const config = { taskQueue: (await stack()).config.taskQueue, statementInterval: 'month' };
    expect(periodicJobs(config).map((j) => j.id)).to.not.include(scheduleId(config, 'rates-poll'));
    const id = scheduleId(config, 'rates-poll');
    // One another file left (live-rates creates it on this task queue, and deletes it) would refuse the create.
    await client.schedule
      .getHandle(id)
      .delete()
      .catch(() => undefined);
    const handle = await client.schedule.create({
      scheduleId: id,
      spec: { intervals: [{ every: '1 hour' }] },
      action: { type: 'startWorkflow', workflowType: 'ratesPollWorkflow', args: [], taskQueue: 'gone', workflowId: id },
    });
    try {
      // Before: VALIDATION_ERROR "no schedule", the one remedy decision 0254 names refused.
      const paused = await cambio('schedule', 'pause', 'rates-poll', '--reason', 'rate sources removed');
      expect(paused.stdout.trim()).to.equal(`${id}: pause done`);
      expect((await handle.describe()).state).to.deep.include({ paused: true, note: 'rate sources removed' });
      // A name that is no schedule at all is still refused as a name.
      const none = await cambioFails('schedule', 'pause', 'rates-pol');
      expect(none.body.code).to.equal('VALIDATION_ERROR');
      expect(none.body.message).to.match(/no schedule "rates-pol": one of event-purge/);
    } finally {
      await handle.delete().catch(() => undefined);
    }
  });
});
