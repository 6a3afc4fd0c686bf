// A statements run after runs that never happened (the schedule paused across period ends, or Temporal down longer
// than the schedule's one-day catch-up window) issues the periods they missed, oldest first, before its own: an
// account's issued statements still follow one another (decision 0314). The runs are issueStatements at the instant
// the schedule would have passed, as the schedule's activity calls it.
import { expect } from 'chai';
import { systemEm } from '../../db/orm';
import { issueStatements } from '../../statements/issue';
import { activeAccount } from '../helpers/fixtures';
import { newCustomer, stack } from '../helpers/stack';

const DAY_MS = 86_400_000;

describe('Issuing statements after missed runs', function () {
  this.timeout(120000);

  it('a daily run after two missed ones issues their periods first; the periods follow one another', async () => {
    const { services, config, http } = await stack();
    const c = await newCustomer('Pausa Longa Ltda');
    const account = (await activeAccount(c, ['BRL'])).id;
    await systemEm(services.orm).execute(`update accounts set created_at = now() - interval '6 days' where id = ?`, [
      account,
    ]);
    const deps = { orm: services.orm, config: { statementInterval: 'day', webhookTaskQueue: config.webhookTaskQueue } };
    const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const day = (n: number) => new Date(today + n * DAY_MS).toISOString();

    // The run of three days ago happened; those of two days ago and yesterday did not (paused); today's does.
    await issueStatements(deps, new Date(today - 3 * DAY_MS + 3000));
    const result = await issueStatements(deps, new Date(today + 3000));
    expect(result).to.include({ periodStart: day(-1), periodEnd: day(0) });
    expect(result.caughtUp).to.be.at.least(2);

    const listed = await http
      .get('/api/statements')
      .query({ filters: `account.id[eq]=${account}`, limit: '100' })
      .set(c.auth);
    expect(listed.status).to.equal(200);
    const periods = (listed.body.data as Array<{ periodStart: string; periodEnd: string }>)
      .map((s) => [s.periodStart, s.periodEnd])
      .sort();
    expect(periods).to.deep.equal([
      [day(-4), day(-3)],
      [day(-3), day(-2)],
      [day(-2), day(-1)],
      [day(-1), day(0)],
    ]);

    // Run again (a retried activity, a trigger): nothing more.
    const again = await issueStatements(deps, new Date(today + 3000));
    expect(again.caughtUp).to.equal(0);
    const relisted = await http
      .get('/api/statements')
      .query({ filters: `account.id[eq]=${account}`, limit: '100' })
      .set(c.auth);
    expect(relisted.body.data).to.have.length(4);
  });
});
