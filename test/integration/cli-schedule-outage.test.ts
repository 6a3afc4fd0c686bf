// `cambio schedule pause` when Postgres or Temporal goes away after Temporal took the pause and before the CLI
// learnt it did (decision 0305): the audit row was written before Temporal was asked, and the CLI's last line says
// what is known. Temporal's answers reach the CLI a second late (a proxy), long enough for the test to see the pause
// on the schedule and cut the other dependency before the CLI goes on.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { ensureSchedules, periodicJobs, scheduleId } from '../../worker/schedules';
import { cambioWithin } from '../helpers/cli';
import { postgresDown } from '../helpers/outages';
import { portForLater } from '../helpers/processes';
import { eventually, stack } from '../helpers/stack';
import { TcpProxy } from '../helpers/tcp-proxy';

const REPLY_DELAY_MS = 1_000;

describe('cambio schedule pause, a dependency cut after Temporal took the pause', function () {
  this.timeout(120_000);

  /** The event purge's schedule, running; a pause whose reply is late, and the cut made once the pause is there. */
  async function pauseThenCut(cut: 'postgres' | 'temporal') {
    const { config, services } = await stack();
    // The CLI's own configuration: this run's task queue, STATEMENT_INTERVAL unset (month).
    const cliConfig = { taskQueue: config.taskQueue, statementInterval: 'month' };
    const id = scheduleId(cliConfig, 'event-purge');
    await ensureSchedules(
      services.temporal,
      cliConfig,
      periodicJobs(cliConfig).filter((j) => j.id === id),
    );
    const handle = services.temporal.schedule.getHandle(id);
    if ((await handle.describe()).state.paused) await handle.unpause('test: running');
    const pg = await postgresDown();
    await pg.proxy.open();
    const [host, port] = config.temporalAddress.split(':');
    const temporal = new TcpProxy(await portForLater(), { host, port: Number(port) }, REPLY_DELAY_MS);
    await temporal.open();
    const reason = `disk swap ${randomUUID()}`;
    try {
      const env = { DATABASE_URL: pg.databaseUrl, TEMPORAL_ADDRESS: `127.0.0.1:${temporal.port}` };
      const running = cambioWithin(60_000, env, 'schedule', 'pause', 'event-purge', '--reason', reason, '--json');
      await eventually(
        () => handle.describe(),
        (d) => d.state.paused && d.state.note === reason,
        30_000,
        25,
      );
      await (cut === 'postgres' ? pg.proxy : temporal).cut();
      const ended = await running;
      const audited = (await systemEm(services.orm).execute(
        `select details->>'outcome' as outcome from audit_log
         where action = 'schedule.pause' and reason = ? order by seq`,
        [reason],
      )) as Array<{ outcome: string }>;
      return { ended, audited: audited.map((r) => r.outcome), state: (await handle.describe()).state };
    } finally {
      await pg.proxy.cut();
      await temporal.cut();
      await handle.unpause('test: done').catch(() => undefined);
    }
  }

  it('Postgres cut after the pause: the pause is audited and the CLI says it is done', async () => {
    const { ended, audited, state } = await pauseThenCut('postgres');
    expect(state.paused).to.equal(true);
    // Before: exit 1, SERVICE_UNAVAILABLE "... run it again later" with recorded false, and no audit row at all.
    expect(ended.exitCode, JSON.stringify(ended.body)).to.equal(0);
    expect(JSON.parse(ended.stdout)).to.deep.include({ action: 'pause' });
    expect(audited).to.deep.equal(['REQUESTED']);
  });

  it('Temporal cut after the pause: the request is audited, the CLI says it may have been paused', async () => {
    const { ended, audited, state } = await pauseThenCut('temporal');
    expect(state.paused).to.equal(true);
    expect(ended.exitCode).to.equal(1);
    expect(ended.body?.code).to.equal('SERVICE_UNAVAILABLE');
    // Not "nothing was done, run it again later": the pause may have been taken (here it was).
    expect(ended.body?.details.recorded, JSON.stringify(ended.body)).to.equal(true);
    expect(ended.body?.message).to.contain('may have been paused').and.contain('cambio schedule list');
    expect(audited).to.deep.equal(['REQUESTED', 'SERVICE_UNAVAILABLE']);
  });
});
