// A statement run that meets an outage is retried until its period is issued: the next run issues the next period,
// never this one, and no tool issues a period after its run has given up. Postgres is real; Temporal's clock is the
// time-skipping test server's, so the retries' back-off costs no real time; the outage is the run's first attempts
// failing as they do while Postgres is unreachable.
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { Worker } from '@temporalio/worker';
import { systemEm } from '../../db/orm';
import { createActivities } from '../../activities';
import { issueStatementsWorkflow } from '../../workflows';
import { activeAccount } from '../helpers/fixtures';
import { newCustomer, stack } from '../helpers/stack';
import { startTimeSkipping, TimeSkipping } from '../helpers/time-skipping';
import { workflowBundle } from '../helpers/workflow-bundle';

// Attempts that fail: more than the five the run used to make, over about a minute of back-off.
const FAILED_ATTEMPTS = 7;

describe('Issuing statements through an outage (time skipping)', function () {
  this.timeout(300000);
  let skipping: TimeSkipping;

  before(async function () {
    skipping = await startTimeSkipping(this, 'statement issue outage');
  });

  after(async () => {
    await skipping?.env.teardown();
  });

  it("a run whose first attempts fail on an outage still issues its period's statements", async () => {
    const { services, config, http } = await stack();
    const c = await newCustomer('Tesouraria Resiliente Ltda');
    const account = (await activeAccount(c, ['BRL'])).id;
    // Opened before yesterday, so yesterday's period (STATEMENT_INTERVAL=day) has a statement of it.
    await systemEm(services.orm).execute(`update accounts set created_at = now() - interval '2 days' where id = ?`, [
      account,
    ]);

    const taskQueue = `cambio-statement-outage-${randomUUID()}`;
    const real = createActivities({ config, orm: services.orm, rates: services.rates, temporal: skipping.env.client });
    let attempts = 0;
    const activities = {
      ...real,
      async issueStatementsOfPeriod(interval: string, at: string) {
        attempts++;
        if (attempts <= FAILED_ATTEMPTS) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        return real.issueStatementsOfPeriod(interval, at);
      },
    };
    const worker = await Worker.create({
      connection: skipping.env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities,
    });
    const result = await worker.runUntil(
      skipping.env.client.workflow.execute(issueStatementsWorkflow, {
        args: ['day'],
        taskQueue,
        workflowId: `statements-outage-${randomUUID()}`,
      }),
    );
    expect(attempts).to.equal(FAILED_ATTEMPTS + 1);
    expect(result.issued).to.be.at.least(1);

    const listed = await http
      .get('/api/statements')
      .query({ filters: `account.id[eq]=${account}` })
      .set(c.auth);
    expect(listed.status).to.equal(200);
    expect(listed.body.data).to.have.length(1);
    expect(listed.body.data[0].periodEnd).to.equal(result.periodEnd);
  });
});
