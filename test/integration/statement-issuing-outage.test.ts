// A Postgres outage while the schedule's run issues a period's statements (decision 0226): the run waits for Postgres
// and issues that period once it answers. Each run issues only the period that closed last before its scheduled
// instant, so a run that gave up during the outage left its period unissued for good: the next run issues the next.
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { openOrm } from '../../db/orm';
import { sessionSettingsOf } from '../../db/session-settings';
import { activeAccount } from '../helpers/fixtures';
import { fund } from '../helpers/money';
import { postgresDown } from '../helpers/outages';
import { newCustomer, stack } from '../helpers/stack';
import { workflowBundle } from '../helpers/workflow-bundle';

const INTERVAL = 'PT8S';
const PERIOD_MS = 8000;
// Longer than the run's retries lasted (1 + 2 + 4 + 8 s): a short Postgres failover.
const OUTAGE_MS = 25_000;

describe('Issuing statements during a Postgres outage', function () {
  this.timeout(180_000);

  it('the run waits for Postgres and issues its period once Postgres answers', async () => {
    const { config, services, http } = await stack();
    const c = await newCustomer('Issued Through An Outage');
    const account = (await activeAccount(c, ['BRL'])).id;
    await fund(c, account, 'BRL', '25.00');
    // The funding is booked inside a period that has closed by the time the run starts.
    const boundary = Math.ceil((Date.now() + 500) / PERIOD_MS) * PERIOD_MS;
    await new Promise((r) => setTimeout(r, boundary + 1000 - Date.now()));

    // The worker's own Postgres, behind a proxy this test cuts (the stack's stays up for the checks).
    const { proxy, databaseUrl } = await postgresDown();
    await proxy.open();
    const orm = await openOrm(databaseUrl, { poolMax: 4, session: sessionSettingsOf(config) });
    const connection = await NativeConnection.connect({ address: config.temporalAddress });
    const taskQueue = `statement-outage-${randomUUID()}`;
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities({
        config: { ...config, taskQueue },
        orm,
        rates: services.rates,
        temporal: services.temporal,
      }),
    });
    try {
      await proxy.cut();
      const result = await worker.runUntil(async () => {
        const handle = await services.temporal.workflow.start('issueStatementsWorkflow', {
          taskQueue,
          workflowId: `statement-outage-${randomUUID()}`,
          args: [INTERVAL],
        });
        await new Promise((r) => setTimeout(r, OUTAGE_MS));
        await proxy.open();
        return (await handle.result()) as { periodStart: string; periodEnd: string; issued: number };
      });
      expect(new Date(result.periodEnd).getTime()).to.equal(boundary);
      const listed = await http
        .get('/api/statements')
        .query({ filters: `account.id[eq]=${account}`, limit: '100' })
        .set(c.auth);
      expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
      const periods = (listed.body.data as Array<{ periodEnd: string }>).map((s) => Date.parse(s.periodEnd));
      expect(periods, 'the statement of the period the run was meant for').to.include(boundary);
    } finally {
      await proxy.cut();
      await connection.close();
      await orm.close(true);
    }
  });
});
